module goha

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/google/shlex v0.0.0-20191202100458-e7afc7fbc510
	github.com/peterh/liner v1.2.3
	golang.org/x/sys v0.50.0
)

require (
	github.com/clipperhouse/uax29/v2 v2.7.0 // indirect
	github.com/mattn/go-runewidth v0.0.31 // indirect
)
