// Command tfprovider-trim trims a writable copy of the hashicorp/aws
// provider's source to the services a Terraform configuration uses (see
// package tfprovider). .ci/tools.sh runs it before building the provider.
//
//	tfprovider-trim -src DIR [-config terraform] [-json]
//	tfprovider-trim -list [-config terraform]
//
// Exit codes: 0 trimmed, 2 usage, 3 failure.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/streamfold/streamfold/internal/laptop/tfprovider"
)

func main() {
	fs := flag.NewFlagSet("tfprovider-trim", flag.ContinueOnError)
	src := fs.String("src", "", "writable copy of "+tfprovider.ModulePath+"'s source (required)")
	config := fs.String("config", "terraform", "directory of the Terraform configuration whose aws_* types are kept")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	list := fs.Bool("list", false, "only print the configuration's aws_* types, one per line (what a trim keeps)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tfprovider-trim -src DIR [-config DIR] [-json]\n       tfprovider-trim -list [-config DIR]\n\n"+
			"Rewrites the provider's two generated registries (service packages, SDK clients)\n"+
			"to the services that register the configuration's aws_* types, plus meta and sts.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if (*src == "") == !*list || fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	types, err := tfprovider.ConfigTypes(*config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if *list {
		fmt.Println(strings.Join(types, "\n"))
		return
	}
	rep, err := tfprovider.Trim(*src, types)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	if *asJSON {
		out := struct {
			Types []string `json:"types"`
			tfprovider.Report
		}{types, rep}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
		return
	}
	fmt.Printf("%d types -> kept %d service packages (%s), %d SDK clients; dropped %d packages, %d clients\n",
		len(types), len(rep.Services), strings.Join(rep.Services, " "), len(rep.Clients), rep.RemovedServices, rep.RemovedClients)
}
