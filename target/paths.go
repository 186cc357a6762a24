package target

import (
	"cmp"
	"path/filepath"
	"strings"
)

// resolvePaths anchors a target file's relative paths at the file's own
// folder, so that a target file works from whatever directory idemcheck
// is run in: start.command when it is a relative path (it contains a
// slash, like ./bin/server; a bare name such as python3 is looked up in
// PATH), start.dir when relative, and install's command and dir the same
// way (install.dir defaults to the file's folder). It sets Dir, the folder, which
// templates see as {{.TargetDir}}. A value that begins with a template
// ({{.WorkDir}}/srv) is left alone, and so is a container target's
// command, which names a path inside the image.
func (t *Target) resolvePaths(file string) error {
	dir, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return err
	}
	t.Dir = dir
	if t.Image == "" && strings.Contains(t.Start.Command, "/") {
		t.Start.Command = anchor(dir, t.Start.Command)
	}
	if t.Start.Dir != "" {
		t.Start.Dir = anchor(dir, t.Start.Dir)
	}
	if in := t.Install; in != nil {
		if strings.Contains(in.Command, "/") {
			in.Command = anchor(dir, in.Command)
		}
		in.Dir = anchor(dir, cmp.Or(in.Dir, "."))
	}
	return nil
}

// anchor joins a relative path to dir; absolute paths and templates stay.
func anchor(dir, path string) string {
	if filepath.IsAbs(path) || strings.HasPrefix(path, "{{") {
		return path
	}
	return filepath.Join(dir, path)
}
