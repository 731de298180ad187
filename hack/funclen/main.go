// Command funclen fails when a product function (not in a _test.go or generated file) is longer
// than -max lines, unless it is listed in -known with at least its length: the known ones are the
// debt issue 30 pays down, and may only shrink. make verify runs it.
//
//	go run ./hack/funclen -max 120 -known hack/funclen/known.txt [-write]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	maxLines := flag.Int("max", 120, "longest a function may be, in lines")
	known := flag.String("known", "hack/funclen/known.txt", "functions allowed over -max: \"<lines> <file>:<func>\" per line")
	write := flag.Bool("write", false, "rewrite -known with today's long functions (after one was shortened)")
	flag.Parse()
	long, err := longFunctions(".", *maxLines)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	if *write {
		if err := writeKnown(*known, long); err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
		return
	}
	allowed, err := readKnown(*known)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	bad := 0
	for _, name := range sortedKeys(long) {
		if n, ok := allowed[name]; !ok || long[name] > n {
			fmt.Printf("funclen: %s is %d lines, over %d (split it into named steps; known: %d)\n", name, long[name], *maxLines, allowed[name])
			bad++
		}
	}
	fmt.Printf("funclen: %d product function(s) over %d lines, all known and none grown; %d new or grown\n", len(long)-bad, *maxLines, bad)
	if bad > 0 {
		os.Exit(1)
	}
}

// longFunctions maps "<file>:<func>" (methods as Type.Method) to the length of each function over
// max lines under root.
func longFunctions(root string, max int) (map[string]int, error) {
	out := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin" || n == "dist") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > max {
				out[filepath.ToSlash(path)+":"+funcName(fn)] = n
			}
		}
		return nil
	})
	return out, err
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

func readKnown(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n, name, ok := strings.Cut(line, " ")
		lines, err := strconv.Atoi(n)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: %q is not \"<lines> <file>:<func>\"", path, line)
		}
		out[strings.TrimSpace(name)] = lines
	}
	return out, sc.Err()
}

func writeKnown(path string, long map[string]int) error {
	var b strings.Builder
	b.WriteString("# Product functions over 120 lines (go run ./hack/funclen -write): issue 30's debt. A function\n")
	b.WriteString("# here may shrink, never grow; a new one may not join. Split them into named steps.\n")
	for _, name := range sortedKeys(long) {
		fmt.Fprintf(&b, "%d %s\n", long[name], name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	return keys
}
