package agentgraph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// asText renders maps and slices through its pooled buffer: the text must be
// pcommon.Value.AsString's, byte for byte.
func TestAsTextIsAsString(t *testing.T) {
	m := pcommon.NewValueMap()
	mm := m.Map()
	mm.PutStr("b", `<tag> & "quoted" é 🙂`+"\n\t\u2028")
	mm.PutInt("a", -42)
	mm.PutDouble("f", 1e21)
	mm.PutDouble("g", 0.000001)
	mm.PutDouble("h", 3.5)
	mm.PutDouble("nan", math.NaN())
	mm.PutBool("t", true)
	mm.PutEmpty("null")
	mm.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2, 250})
	inner := mm.PutEmptySlice("list")
	inner.AppendEmpty().SetStr("x")
	inner.AppendEmpty().SetEmptyMap().PutStr("k", "v")
	inner.AppendEmpty().SetEmptySlice()
	mm.PutEmptyMap("empty")

	s := pcommon.NewValueSlice()
	s.Slice().AppendEmpty().SetInt(1)
	s.Slice().AppendEmpty().SetStr("</script>")
	m.CopyTo(s.Slice().AppendEmpty())

	for _, v := range []pcommon.Value{m, s, pcommon.NewValueMap(), pcommon.NewValueSlice()} {
		for range 2 { // the second time through a pooled buffer
			require.Equal(t, v.AsString(), asText(v))
		}
	}
}
