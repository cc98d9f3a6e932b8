// Command gen writes the pinned price table internal/pricing/data/genai-prices.json (and the
// data's license beside it) from the npm package @pydantic/genai-prices installed under
// e2e/clients (pinned in its package.json; `make e2e-clients` installs it):
//
//	go run ./internal/pricing/gen -package e2e/clients/node_modules/@pydantic/genai-prices -out internal/pricing/data
//
// (`make prices` runs it). The package ships its data as a JavaScript literal, the first
// statement of dist/index.js (`const E = [...]`); gen has Node.js evaluate that literal alone
// and print it as JSON, then keeps what a span can be billed by (text input, output, cache
// read and write, per request) with every match rule, in the data's order.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/pricing"
)

func main() {
	pkg := flag.String("package", "e2e/clients/node_modules/@pydantic/genai-prices", "the installed npm package")
	out := flag.String("out", "internal/pricing/data", "where to write genai-prices.json and LICENSE")
	flag.Parse()
	if err := generate(*pkg, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// extract is run by Node.js: it evaluates the data literal that opens dist/index.js (and
// nothing else of the bundle) and prints it as JSON.
const extract = `
const fs = require("fs");
const src = fs.readFileSync(process.argv[1], "utf8");
const head = "const E = [";
const end = src.indexOf("\n], ");
if (!src.startsWith(head) || end < 0) {
  console.error("dist/index.js does not open with the data literal (const E = [ ... ], ...): the package layout changed");
  process.exit(2);
}
const data = new Function("return " + src.slice(head.length - 1, end + 2))();
process.stdout.write(JSON.stringify(data));
`

// generate writes the snapshot and the license of the package in dir pkg into out.
func generate(pkg, out string) error {
	var meta struct {
		Name, Version, License string
	}
	raw, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		return fmt.Errorf("%w (run `make e2e-clients` to install the pinned package)", err)
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return fmt.Errorf("package.json: %w", err)
	}
	if meta.Name != "@pydantic/genai-prices" || meta.License != "MIT" {
		return fmt.Errorf("package.json: want @pydantic/genai-prices under the MIT license, got %s (%s)", meta.Name, meta.License)
	}
	license, err := os.ReadFile(filepath.Join(pkg, "LICENSE"))
	if err != nil {
		return err
	}
	cmd := exec.Command("node", "-e", extract, filepath.Join(pkg, "dist", "index.js"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	data, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("node: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	snap, err := convert(data)
	if err != nil {
		return err
	}
	snap.Package, snap.Version, snap.License = meta.Name, meta.Version, meta.License
	snap.URL = "https://registry.npmjs.org/@pydantic/genai-prices/-/genai-prices-" + meta.Version + ".tgz"
	text, err := encode(snap)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "genai-prices.json"), text, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "LICENSE"), license, 0o644)
}

type rawProvider struct {
	ID            string          `json:"id"`
	ProviderMatch json.RawMessage `json:"provider_match"`
	ModelMatch    json.RawMessage `json:"model_match"`
	Fallback      []string        `json:"fallback_model_providers"`
	Models        []struct {
		ID     string          `json:"id"`
		Match  json.RawMessage `json:"match"`
		Prices json.RawMessage `json:"prices"`
	} `json:"models"`
}

// convert turns the package's providers into the snapshot's.
func convert(data []byte) (pricing.Snapshot, error) {
	var providers []rawProvider
	if err := json.Unmarshal(data, &providers); err != nil {
		return pricing.Snapshot{}, fmt.Errorf("the data: %w", err)
	}
	var snap pricing.Snapshot
	for _, rp := range providers {
		p := pricing.Provider{ID: rp.ID, Fallback: rp.Fallback}
		var err error
		if p.ProviderMatch, err = canonical(rp.ProviderMatch); err != nil {
			return snap, fmt.Errorf("provider %s: %w", rp.ID, err)
		}
		if p.ModelMatch, err = canonical(rp.ModelMatch); err != nil {
			return snap, fmt.Errorf("provider %s: %w", rp.ID, err)
		}
		for _, rm := range rp.Models {
			m := pricing.Model{ID: rm.ID}
			if m.Match, err = canonical(rm.Match); err != nil || m.Match == nil {
				return snap, fmt.Errorf("model %s/%s: match: %v", rp.ID, rm.ID, err)
			}
			if m.Prices, err = prices(rm.Prices); err != nil {
				return snap, fmt.Errorf("model %s/%s: %w", rp.ID, rm.ID, err)
			}
			p.Models = append(p.Models, m)
		}
		snap.Providers = append(snap.Providers, p)
	}
	if len(snap.Providers) == 0 {
		return snap, errors.New("the data holds no provider")
	}
	return snap, nil
}

// canonical re-encodes a match rule with sorted keys (nil stays nil).
func canonical(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// prices reads a model's prices: one price object, or a list of {constraint, prices}.
func prices(raw json.RawMessage) ([]pricing.Conditional, error) {
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		var list []struct {
			Constraint map[string]string `json:"constraint"`
			Prices     json.RawMessage   `json:"prices"`
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		out := make([]pricing.Conditional, 0, len(list))
		for _, c := range list {
			p, err := priceSet(c.Prices)
			if err != nil {
				return nil, err
			}
			cond := pricing.Conditional{Prices: p}
			if c.Constraint != nil {
				k := &pricing.Constraint{StartDate: c.Constraint["start_date"], StartTime: c.Constraint["start_time"], EndTime: c.Constraint["end_time"]}
				if k.StartDate == "" && (k.StartTime == "" || k.EndTime == "") {
					return nil, fmt.Errorf("unknown price constraint %v", c.Constraint)
				}
				cond.Constraint = k
			}
			out = append(out, cond)
		}
		return out, nil
	}
	p, err := priceSet(raw)
	if err != nil {
		return nil, err
	}
	return []pricing.Conditional{{Prices: p}}, nil
}

// priceSet keeps the prices a span can be billed by.
func priceSet(raw json.RawMessage) (pricing.Prices, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return pricing.Prices{}, err
	}
	var p pricing.Prices
	for key, dst := range map[string]**pricing.Price{
		"input_mtok": &p.Input, "output_mtok": &p.Output, "cache_read_mtok": &p.CacheRead, "cache_write_mtok": &p.CacheWrite,
	} {
		if v, ok := all[key]; ok {
			var price pricing.Price
			if err := json.Unmarshal(v, &price); err != nil {
				return p, fmt.Errorf("%s: %w", key, err)
			}
			*dst = &price
		}
	}
	if v, ok := all["requests_kcount"]; ok {
		var n float64
		if err := json.Unmarshal(v, &n); err != nil {
			return p, fmt.Errorf("requests_kcount: %w", err)
		}
		p.RequestsKCount = &n
	}
	return p, nil
}

// encode writes the snapshot as JSON with one model per line, so a new version of the data
// shows as a readable diff.
func encode(s pricing.Snapshot) ([]byte, error) {
	var b bytes.Buffer
	head, err := json.Marshal(struct {
		Package string `json:"package"`
		Version string `json:"version"`
		URL     string `json:"url"`
		License string `json:"license"`
	}{s.Package, s.Version, s.URL, s.License})
	if err != nil {
		return nil, err
	}
	b.Write(head[:len(head)-1])
	b.WriteString(`,"providers":[`)
	for i, p := range s.Providers {
		if i > 0 {
			b.WriteString(",")
		}
		models := p.Models
		p.Models = nil
		line, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		// {"id":...,"models":null} → {"id":...,"models":[ one model per line ]}
		line = bytes.TrimSuffix(line, []byte(`"models":null}`))
		b.WriteString("\n")
		b.Write(line)
		b.WriteString(`"models":[`)
		for j, m := range models {
			if j > 0 {
				b.WriteString(",")
			}
			ml, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			b.WriteString("\n")
			b.Write(ml)
		}
		b.WriteString("]}")
	}
	b.WriteString("\n]}\n")
	return b.Bytes(), nil
}
