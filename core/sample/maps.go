package sample

import "sync"

// MapSet holds the map files a process loaded, by name; mu guards byName.
type MapSet struct {
	mu     sync.Mutex
	byName map[string]*Map
}

// Map is one loaded map or pattern file.
type Map struct {
	Name string
}
