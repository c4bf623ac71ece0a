package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/streamfold/streamfold/ingest/simulate"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	days, _ := strconv.Atoi(os.Args[2])
	evs, st, err := simulate.Generate(simulate.Config{Seed: 1, Events: n, Days: days})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	b, _ := json.MarshalIndent(st, "", " ")
	fmt.Fprintln(os.Stderr, string(b))
	fmt.Fprintln(os.Stderr, "first", evs[0].Time, "last", evs[len(evs)-1].Time)
	enc := json.NewEncoder(os.Stdout)
	for _, e := range evs {
		enc.Encode(e)
	}
}
