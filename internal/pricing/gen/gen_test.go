package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReproducesTheSnapshot: the generator, run on the package pinned in e2e/clients
// (installed by `make e2e-clients`, which `make test` runs), writes the committed snapshot
// and license byte for byte.
func TestReproducesTheSnapshot(t *testing.T) {
	pkg := filepath.Join("..", "..", "..", "e2e", "clients", "node_modules", "@pydantic", "genai-prices")
	if _, err := os.Stat(pkg); err != nil {
		t.Fatalf("%v: run `make e2e-clients` (`make test` does)", err)
	}
	out := t.TempDir()
	require.NoError(t, generate(pkg, out))
	for _, name := range []string{"genai-prices.json", "LICENSE"} {
		want, err := os.ReadFile(filepath.Join("..", "data", name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "%s differs from what the generator writes: run `make prices`", name)
	}
}
