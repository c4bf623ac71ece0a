// Package tfprovider trims a copy of the hashicorp/aws provider's source
// (github.com/hashicorp/terraform-provider-aws, from the Go module proxy) to
// the service packages one Terraform configuration uses, so that the real
// provider can be built on a small machine in minutes instead of half an
// hour.
//
// The provider registers its 260-odd services in one generated file
// (internal/provider/sdkv2/service_packages_gen.go) and creates its SDK
// clients through one generated file (internal/conns/awsclient_gen.go, one
// method per service). Trim rewrites exactly those two files:
//
//   - service packages: kept when they register a resource, data source,
//     ephemeral resource or list resource type the configuration names
//     (read from each package's service_package_gen.go), plus "meta" and
//     "sts", which the provider itself uses;
//   - client methods: kept when a package the trimmed provider still imports
//     (the import closure from the module's main package) calls them.
//
// Every other line of the provider, the schemas and validation of the kept
// resources included, is the provider's own and is compiled unchanged. A
// configuration naming a type the trimmed provider does not have is not
// possible by construction (the types are read from that configuration);
// Terraform rejects it if the two ever drift ("provider does not support
// resource type").
//
// Trim is deterministic: the same source and the same types give the same
// files. It is not safe to run twice on the same directory concurrently.
package tfprovider

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// ModulePath is the provider's Go module path.
const ModulePath = "github.com/hashicorp/terraform-provider-aws"

// The two generated files Trim rewrites, relative to the module root.
const (
	servicePackagesFile = "internal/provider/sdkv2/service_packages_gen.go"
	awsClientFile       = "internal/conns/awsclient_gen.go"
)

// alwaysKept are service packages the provider's own code needs whatever the
// configuration: meta (aws_region, aws_partition and the provider's region
// handling) and sts (the caller identity the provider checks at configure
// time).
var alwaysKept = []string{"meta", "sts"}

// ErrUnknownType reports configuration types that no service package of the
// provider's source registers.
var ErrUnknownType = errors.New("tfprovider: type not registered by any service package")

// Report says what Trim kept.
type Report struct {
	// Services are the kept service packages, sorted.
	Services []string
	// Clients are the kept AWSClient methods (e.g. "DynamoDBClient"), sorted.
	Clients []string
	// RemovedServices and RemovedClients count what was dropped.
	RemovedServices, RemovedClients int
}

// Trim rewrites the provider source in dir (a writable copy of the module)
// to the service packages that register types. types are Terraform type
// names such as "aws_dynamodb_table" (resources and data sources alike).
func Trim(dir string, types []string) (Report, error) {
	var rep Report
	owners, err := typeOwners(dir)
	if err != nil {
		return rep, err
	}
	keep := map[string]bool{}
	for _, s := range alwaysKept {
		keep[s] = true
	}
	var unknown []string
	for _, t := range types {
		pkgs := owners[t]
		if len(pkgs) == 0 {
			unknown = append(unknown, t)
			continue
		}
		for _, p := range pkgs {
			keep[p] = true
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return rep, fmt.Errorf("%w: %s", ErrUnknownType, strings.Join(unknown, ", "))
	}
	removed, err := trimServicePackages(filepath.Join(dir, servicePackagesFile), keep)
	if err != nil {
		return rep, err
	}
	rep.RemovedServices = removed
	for s := range keep {
		rep.Services = append(rep.Services, s)
	}
	sort.Strings(rep.Services)

	used, err := usedClientMethods(dir)
	if err != nil {
		return rep, err
	}
	rep.Clients, rep.RemovedClients, err = trimClients(filepath.Join(dir, awsClientFile), used)
	return rep, err
}

// typeNameRE finds the type names a service_package_gen.go registers.
var typeNameRE = regexp.MustCompile(`TypeName:\s*"(aws_[a-z0-9_]+)"`)

// typeOwners maps each registered type name to the service packages that
// register it (normally one).
func typeOwners(dir string) (map[string][]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "internal", "service", "*", "service_package_gen.go"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("tfprovider: %s has no internal/service/*/service_package_gen.go: not the provider's source?", dir)
	}
	owners := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		pkg := filepath.Base(filepath.Dir(f))
		for _, m := range typeNameRE.FindAllSubmatch(b, -1) {
			owners[string(m[1])] = append(owners[string(m[1])], pkg)
		}
	}
	return owners, nil
}

// trimServicePackages drops the imports and the X.ServicePackage(ctx)
// elements of the service packages not in keep. It returns how many were
// dropped.
func trimServicePackages(file string, keep map[string]bool) (int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		return 0, fmt.Errorf("tfprovider: %w", err)
	}
	servicePrefix := ModulePath + "/internal/service/"
	names := map[string]string{} // local import name -> service package
	for _, imp := range f.Imports {
		if p, local := importOf(imp); strings.HasPrefix(p, servicePrefix) {
			names[local] = strings.TrimPrefix(p, servicePrefix)
		}
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("tfprovider: %s imports no service package: the generated file changed shape", file)
	}
	removed := 0
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		cl, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		var kept []ast.Expr
		matched := false
		for _, e := range cl.Elts {
			svc, ok := servicePackageCall(e, names)
			if !ok {
				kept = append(kept, e)
				continue
			}
			matched = true
			if keep[svc] {
				kept = append(kept, e)
			} else {
				removed++
			}
		}
		if matched {
			found = true
			cl.Elts = kept
		}
		return true
	})
	if !found {
		return 0, fmt.Errorf("tfprovider: %s: no list of X.ServicePackage(ctx) calls: the generated file changed shape", file)
	}
	for local, svc := range names {
		if !keep[svc] {
			deleteImport(f, ModulePath+"/internal/service/"+svc, local)
		}
	}
	return removed, writeFile(file, fset, f)
}

// servicePackageCall reports whether e is X.ServicePackage(ctx) for an
// imported service package X, and which.
func servicePackageCall(e ast.Expr, names map[string]string) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "ServicePackage" {
		return "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	svc, ok := names[id.Name]
	return svc, ok
}

// usedClientMethods returns the names of the form XxxClient called as a
// method anywhere in the non-test Go files of the packages the module's main
// package imports, directly or not, within the module.
func usedClientMethods(dir string) (map[string]bool, error) {
	used := map[string]bool{}
	seen := map[string]bool{}
	queue := []string{"."}
	for len(queue) > 0 {
		rel := queue[0]
		queue = queue[1:]
		if seen[rel] {
			continue
		}
		seen[rel] = true
		files, err := goFiles(filepath.Join(dir, rel))
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, fmt.Errorf("tfprovider: %w", err)
			}
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if p == ModulePath {
					queue = append(queue, ".")
				} else if strings.HasPrefix(p, ModulePath+"/") {
					queue = append(queue, strings.TrimPrefix(p, ModulePath+"/"))
				}
			}
			if filepath.Base(file) == filepath.Base(awsClientFile) {
				continue // the definitions are not uses
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok && strings.HasSuffix(sel.Sel.Name, "Client") {
					used[sel.Sel.Name] = true
				}
				return true
			})
		}
	}
	return used, nil
}

// goFiles lists the non-test Go files of one package directory. Build
// constraints are not evaluated: a file for another platform only makes the
// kept set larger, never wrong.
func goFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tfprovider: %w", err)
	}
	var out []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		out = append(out, filepath.Join(dir, n))
	}
	return out, nil
}

// trimClients drops the AWSClient methods not in used, then the imports no
// longer referenced. It returns the kept method names and how many were
// dropped.
func trimClients(file string, used map[string]bool) ([]string, int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		return nil, 0, fmt.Errorf("tfprovider: %w", err)
	}
	var decls []ast.Decl
	var kept []string
	removed := 0
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || !strings.HasSuffix(fd.Name.Name, "Client") {
			decls = append(decls, d)
			continue
		}
		if used[fd.Name.Name] {
			decls = append(decls, d)
			kept = append(kept, fd.Name.Name)
		} else {
			removed++
		}
	}
	if removed+len(kept) == 0 {
		return nil, 0, fmt.Errorf("tfprovider: %s: no XxxClient methods: the generated file changed shape", file)
	}
	f.Decls = decls
	// Comments of removed functions would be re-attached to whatever follows.
	f.Comments = nil
	referenced := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				referenced[id.Name] = true
			}
		}
		return true
	})
	for _, imp := range append([]*ast.ImportSpec(nil), f.Imports...) {
		p, local := importOf(imp)
		if local == "_" || local == "." || referenced[local] {
			continue
		}
		deleteImport(f, p, local)
	}
	sort.Strings(kept)
	return kept, removed, writeFile(file, fset, f)
}

// importOf returns an import's path and the name it is used by (the last
// path element unless renamed; the provider's packages are named so).
func importOf(is *ast.ImportSpec) (importPath, local string) {
	importPath, _ = strconv.Unquote(is.Path.Value)
	local = path.Base(importPath)
	if is.Name != nil {
		local = is.Name.Name
	}
	return importPath, local
}

// deleteImport removes one import spec (by path and local name) from f.
func deleteImport(f *ast.File, importPath, local string) {
	keep := func(is *ast.ImportSpec) bool {
		p, name := importOf(is)
		return p != importPath || name != local
	}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			var specs []ast.Spec
			for _, s := range gd.Specs {
				if keep(s.(*ast.ImportSpec)) {
					specs = append(specs, s)
				}
			}
			gd.Specs = specs
		}
	}
	var imps []*ast.ImportSpec
	for _, is := range f.Imports {
		if keep(is) {
			imps = append(imps, is)
		}
	}
	f.Imports = imps
}

func writeFile(file string, fset *token.FileSet, f *ast.File) error {
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return fmt.Errorf("tfprovider: format %s: %w", file, err)
	}
	// Reparse: a rewrite that does not parse must fail here, not in a
	// 10-minute build.
	if _, err := parser.ParseFile(token.NewFileSet(), file, buf.Bytes(), 0); err != nil {
		return fmt.Errorf("tfprovider: rewritten %s does not parse: %w", file, err)
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}
