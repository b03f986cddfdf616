// Command filedeps measures how the files of a Go package depend on each
// other: file A depends on file B when A uses a name (function, type,
// method, field, variable, constant) declared in B. Files that depend on
// each other, directly or through others, form one floor; a package whose
// files all stand on separate floors reads from the bottom up. It prints
// every dependency inside a floor (each runs against the layering), then
// their count.
//
//	go run ./scripts/filedeps ./core ./core/stream
package main

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	total := 0
	for _, dir := range os.Args[1:] {
		n, err := measure(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		total += n
	}
	fmt.Printf("total: %d file-to-file dependencies against the layering\n", total)
}

func measure(dir string) (int, error) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		return 0, err
	}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check(dir, fset, files, info)
	if err != nil {
		return 0, err
	}
	name := func(p token.Pos) string { return filepath.Base(fset.Position(p).Filename) }
	edges := map[string]map[string]bool{}
	names := map[string]map[string]bool{} // "a -> b": the names a uses from b
	add := func(from token.Pos, obj types.Object) {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			return
		}
		a, b := name(from), name(obj.Pos())
		if a == b {
			return
		}
		if edges[a] == nil {
			edges[a] = map[string]bool{}
		}
		edges[a][b] = true
		e := a + " -> " + b
		if names[e] == nil {
			names[e] = map[string]bool{}
		}
		names[e][obj.Name()] = true
	}
	for id, obj := range info.Uses {
		if v, ok := obj.(*types.Var); ok && !v.IsField() && v.Parent() != pkg.Scope() {
			continue // locals and parameters
		}
		add(id.Pos(), obj)
	}
	for sel, s := range info.Selections {
		add(sel.Sel.Pos(), s.Obj())
	}
	// Floors: the strongly connected components of the file graph.
	comp := scc(edges)
	var against []string
	for a, bs := range edges {
		for b := range bs {
			if comp[a] == comp[b] {
				against = append(against, a+" -> "+b)
			}
		}
	}
	sort.Strings(against)
	mutual := 0
	for a, bs := range edges {
		for b := range bs {
			if a < b && edges[b][a] {
				mutual++
			}
		}
	}
	fmt.Printf("%s: %d files, %d floors, %d dependencies against the layering (%d pairs of files that use each other)\n",
		dir, len(files), countFloors(comp, files, fset), len(against), mutual)
	for _, e := range against {
		var ns []string
		for n := range names[e] {
			ns = append(ns, n)
		}
		sort.Strings(ns)
		fmt.Printf("    %s (%s)\n", e, strings.Join(ns, " "))
	}
	return len(against), nil
}

// scc numbers the strongly connected components of g (Tarjan).
func scc(g map[string]map[string]bool) map[string]int {
	index, low, comp := map[string]int{}, map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	next, ncomp := 0, 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for w := range g[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp[w] = ncomp
				if w == v {
					break
				}
			}
			ncomp++
		}
	}
	var nodes []string
	for v, ws := range g {
		nodes = append(nodes, v)
		for w := range ws {
			nodes = append(nodes, w)
		}
	}
	sort.Strings(nodes)
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return comp
}

// countFloors is the number of floors, a file that nothing depends on and
// that depends on nothing counting as one.
func countFloors(comp map[string]int, files []*ast.File, fset *token.FileSet) int {
	seen := map[int]bool{}
	n := 0
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		c, ok := comp[name]
		if !ok {
			n++
			continue
		}
		if !seen[c] {
			seen[c] = true
			n++
		}
	}
	return n
}
