package assertionexporter

import (
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/confmap"
)

// FuzzConfigUnmarshal: whatever YAML a user writes, the key and type walk and the decode
// return an error or a config, never a panic.
func FuzzConfigUnmarshal(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ret, err := confmap.NewRetrievedFromYAML(data)
		if err != nil {
			return
		}
		conf, err := ret.AsConf()
		if err != nil {
			return
		}
		_ = conf.Unmarshal(createDefaultConfig())
	})
}
