// Package configtest holds the config-loading checks the component tests share: a named
// section of a testdata file loaded over the factory's defaults, and an invalid file's
// error.
package configtest

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// RequireLoads unmarshals section id of cm over cfg (the factory's default config),
// validates it and requires it to equal expected.
func RequireLoads(t *testing.T, cm *confmap.Conf, id component.ID, cfg, expected component.Config) {
	t.Helper()
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	require.Equal(t, expected, cfg)
}

// RequireInvalid loads the file at path over cfg (the factory's default config) and requires
// the unmarshaler (unknown keys) or, when it accepts the file, Validate to fail with an error
// that contains want.
func RequireInvalid(t *testing.T, path string, cfg component.Config, want string) {
	t.Helper()
	cm, err := confmaptest.LoadConf(path)
	require.NoError(t, err)
	err = cm.Unmarshal(cfg)
	if err == nil {
		err = confmap.Validate(cfg)
	}
	require.ErrorContains(t, err, want)
}
