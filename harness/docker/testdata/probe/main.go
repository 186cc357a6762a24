// Command probe dials each address it is given and prints one line per
// address: "ADDR CONNECTED" or "ADDR ERROR". The container-mode tests run
// it where a replica sits, to prove what a replica can reach.
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	for _, addr := range os.Args[1:] {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			fmt.Println(addr, err)
			continue
		}
		c.Close()
		fmt.Println(addr, "CONNECTED")
	}
}
