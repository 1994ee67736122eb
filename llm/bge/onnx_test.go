package bge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// pb builds protobuf messages for the tests.
type pb []byte

func (b pb) varint(num int, v uint64) pb {
	b = binary.AppendUvarint(b, uint64(num)<<3|wireVarint)
	return binary.AppendUvarint(b, v)
}

func (b pb) bytes(num int, v []byte) pb {
	b = binary.AppendUvarint(b, uint64(num)<<3|wireBytes)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func (b pb) str(num int, s string) pb { return b.bytes(num, []byte(s)) }

func node(op string, inputs, outputs []string) pb {
	var n pb
	for _, in := range inputs {
		n = n.str(nodeInput, in)
	}
	for _, o := range outputs {
		n = n.str(nodeOutput, o)
	}
	return n.str(3, "name-is-skipped").str(nodeOpType, op)
}

// tensor is a float initializer with values 0, 1, 2 …; packed picks how
// its dims are written, and float_data instead of raw_data holds them when
// floatData is set.
func tensor(name string, dims []int, packed, floatData bool) pb {
	var t pb
	if packed {
		var d []byte
		for _, v := range dims {
			d = binary.AppendUvarint(d, uint64(v))
		}
		t = t.bytes(tensorDims, d)
	} else {
		for _, v := range dims {
			t = t.varint(tensorDims, uint64(v))
		}
	}
	t = t.varint(tensorDataType, onnxFloat).str(tensorName, name)
	var data []byte
	for i := range prod(dims) {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(i)))
	}
	field := tensorRawData
	if floatData {
		field = tensorFloatData
	}
	return t.bytes(field, data)
}

// tinyONNX is a model of one MatMul and one Add, with the fields an export
// has around them (ir_version, producer, a fixed64 and a fixed32 field).
func tinyONNX() []byte {
	var g pb
	g = g.bytes(graphNode, node("MatMul", []string{"x", "onnx::MatMul_1"}, []string{"mm"}))
	g = g.bytes(graphNode, node("Add", []string{"dense.bias", "mm"}, []string{"y"}))
	g = g.str(2, "graph-name")
	g = g.bytes(graphInitializer, tensor("onnx::MatMul_1", []int{2, 3}, true, false))
	g = g.bytes(graphInitializer, tensor("dense.bias", []int{3}, false, true))
	var m pb
	m = m.varint(1, 8).str(2, "pytorch")
	m = binary.AppendUvarint(m, 9<<3|wireFixed64)
	m = append(m, make([]byte, 8)...)
	m = binary.AppendUvarint(m, 10<<3|wireFixed32)
	m = append(m, make([]byte, 4)...)
	return m.bytes(modelGraph, g)
}

func TestReadONNX(t *testing.T) {
	g, err := readONNX(tinyONNX())
	if err != nil {
		t.Fatal(err)
	}
	if len(g.nodes) != 2 || g.nodes[0].op != "MatMul" || !slices.Equal(g.nodes[1].inputs, []string{"dense.bias", "mm"}) {
		t.Errorf("nodes = %+v", g.nodes)
	}
	mm := g.inits["onnx::MatMul_1"]
	if mm == nil || !slices.Equal(mm.dims, []int{2, 3}) || mm.dataType != onnxFloat || len(mm.data) != 24 {
		t.Fatalf("MatMul initializer = %+v", mm)
	}
	r := newWeightsReader(g)
	// Stored [in=2, out=3]: element (i, o) is i·3+o; the matrix is out×in.
	w, err := r.matrix("dense.bias", 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{0, 3, 1, 4, 2, 5}; !slices.Equal(w, want) {
		t.Errorf("matrix = %v, want %v", w, want)
	}
	if b, err := r.f32("dense.bias", 3); err != nil || !slices.Equal(b, []float32{0, 1, 2}) {
		t.Errorf("bias = %v, %v", b, err)
	}
	if _, err := r.f32("dense.bias", 4); err == nil || !strings.Contains(err.Error(), "dense.bias is [3], bge-small-en-v1.5's is [4]") {
		t.Errorf("a tensor of another shape: %v", err)
	}
	if _, err := r.matrix("other.bias", 3, 2); err == nil || !strings.Contains(err.Error(), "no Add node takes other.bias") {
		t.Errorf("a bias no Add takes: %v", err)
	}
}

func TestReadONNXErrors(t *testing.T) {
	good := tinyONNX()
	var dup pb
	dup = dup.bytes(graphInitializer, tensor("a", []int{1}, true, false))
	dup = dup.bytes(graphInitializer, tensor("a", []int{1}, true, false))
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "no graph"},
		{"text", []byte("not a model at all"), "unsupported wire type"},
		{"truncated", good[:len(good)-5], "truncated"},
		{"bad varint", []byte{0x80, 0x80}, "bad varint"},
		{"field 0", []byte{0x02, 0x00}, "field number 0"},
		{"group", []byte{0x0b}, "unsupported wire type 3"},
		{"duplicate", pb(nil).bytes(modelGraph, dup), `initializer "a" appears twice`},
	}
	for _, tt := range tests {
		_, err := readONNX(tt.file)
		if err == nil || !errors.Is(err, errFormat) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: readONNX = %v, want an errFormat error containing %q", tt.name, err, tt.want)
		}
	}
}

// TestForeignShape: a file whose tensors are not bge-small-en-v1.5's is
// refused with an error naming what differs.
func TestForeignShape(t *testing.T) {
	graph := func(inits ...pb) []byte {
		var g pb
		for _, in := range inits {
			g = g.bytes(graphInitializer, in)
		}
		return pb(nil).bytes(modelGraph, g)
	}
	var six []pb
	for l := range 6 {
		six = append(six, tensor("encoder.layer."+string(rune('0'+l))+".output.dense.bias", []int{1}, true, false))
	}
	var twelve []pb
	for l := range 12 {
		twelve = append(twelve, tensor("encoder.layer."+string(rune('a'+l))+".x", []int{1}, true, false))
	}
	twelve = append(twelve, tensor("encoder.layer.11.output.dense.bias", []int{1}, true, false),
		tensor("embeddings.word_embeddings.weight", []int{1000, 384}, true, false))
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"layers", graph(six...), "6 encoder layers, bge-small-en-v1.5 has 12"},
		{"vocabulary", graph(twelve...), "embeddings.word_embeddings.weight is [1000 384], bge-small-en-v1.5's is [30522 384]"},
		{"not an export", graph(tensor("encoder.layer.11.x", []int{1}, true, false)), "no tensor embeddings.word_embeddings.weight"},
	}
	for _, tt := range tests {
		g, err := readONNX(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newWeightsReader(g).weights(tt.file, bytes.NewReader(tt.file)); err == nil || !errors.Is(err, errFormat) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: weights = %v, want an errFormat error containing %q", tt.name, err, tt.want)
		}
	}
}

// FuzzONNX: any bytes give a graph or an error, never a panic, and the
// weights read from a graph are the model's or an error.
func FuzzONNX(f *testing.F) {
	f.Add(tinyONNX())
	f.Add([]byte{})
	f.Add([]byte(pb(nil).bytes(modelGraph, pb(nil).bytes(graphInitializer, tensor("embeddings.word_embeddings.weight", []int{2, 2}, false, false)))))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := readONNX(data)
		if err != nil {
			if !errors.Is(err, errFormat) {
				t.Fatalf("readONNX error %v is not errFormat", err)
			}
			return
		}
		r := newWeightsReader(g)
		if _, err := r.weights(data, bytes.NewReader(data)); err == nil {
			t.Fatal("a fuzzed graph gave bge-small-en-v1.5's weights")
		}
		_, _ = r.matrix("dense.bias", 3, 2)
	})
}
