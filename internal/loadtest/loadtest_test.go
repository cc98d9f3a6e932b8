package loadtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

func TestOptionsErrorsNameTheField(t *testing.T) {
	_, err := Execute(context.Background(), Options{Rate: -1, Senders: 0, Batch: 0})
	if err == nil {
		t.Fatal("empty options accepted")
	}
	for _, want := range []string{
		"binary: empty", "duration (0s) must be > 0", "rate (-1) must be >= 0",
		"senders (0) must be >= 1", "batch (0) must be >= 1", "templates (0) must be >= 1",
		"retained: no measurement of the processor's retained bytes given",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	_, err = Execute(context.Background(), Options{Binary: "x", Duration: 1, Senders: 1, Batch: 1, Templates: 1})
	if err == nil || !strings.Contains(err.Error(), "rate: 0 and saturation off leave nothing to run") {
		t.Errorf("rate 0 without saturation: %v", err)
	}
}

// TestWithPprofEveryPipeline: --profile adds the pprof extension to every pipeline's config,
// defined and enabled, and refuses a config whose service section it cannot read.
func TestWithPprofEveryPipeline(t *testing.T) {
	for _, p := range Pipelines {
		config, err := withPprof(fmt.Sprintf(p.Config, 4317, 13133, 8888), 1777)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, want := range []string{`pprof: {endpoint: "127.0.0.1:1777"}`, "extensions: [health_check, pprof]"} {
			if !strings.Contains(config, want) {
				t.Errorf("%s: no %q in\n%s", p.Name, want, config)
			}
		}
	}
	if _, err := withPprof("service: {}", 1777); err == nil {
		t.Error("a config without the health_check extension: no error")
	}
}
