package cauri

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageDocs holds every package of the module to a doc comment that
// says what it owns.
func TestPackageDocs(t *testing.T) {
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || strings.HasPrefix(d.Name(), ".") && path != "." {
			if d != nil && d.IsDir() && path != "." {
				return filepath.SkipDir
			}
			return err
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool {
			return !strings.HasSuffix(fi.Name(), "_test.go")
		}, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			documented := false
			for _, f := range pkg.Files {
				if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
					documented = true
				}
			}
			if !documented {
				t.Errorf("package %s (%s) has no doc comment", name, path)
			}
		}
		return nil
	})
}

// TestLicence holds the repository to its licence: LICENSE is the Apache
// License 2.0 and NOTICE names every vendored third-party licence file
// (LICENSE-<name> beside the code it covers), so vendoring something new
// without crediting it fails here.
func TestLicence(t *testing.T) {
	licence, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(licence), "Apache License\n                           Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0 text")
	}
	notice, err := os.ReadFile("NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "LICENSE-") {
			found++
			if !strings.Contains(string(notice), filepath.ToSlash(path)) {
				t.Errorf("NOTICE does not name %s", path)
			}
		}
		return nil
	})
	if found == 0 {
		t.Errorf("found no vendored LICENSE-* file; want at least Redoc's")
	}
}
