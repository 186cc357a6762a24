module idemcheck.gallery/charge

go 1.26
