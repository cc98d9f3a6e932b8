package loadtest

import (
	"context"
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
