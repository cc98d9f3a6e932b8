package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/otelcol-handoff/otelcol-handoff/internal/rules"
	"github.com/otelcol-handoff/otelcol-handoff/internal/spanfile"
)

func readResults(path string) ([]rules.Result, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []rules.Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), spanfile.MaxRequest)
	for sc.Scan() {
		var r rules.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}
