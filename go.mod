module goha

go 1.26
