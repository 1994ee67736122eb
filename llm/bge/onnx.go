package bge

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The ONNX file is a protobuf ModelProto (onnx/onnx.proto). This reader
// decodes only what the encoder needs, straight from the file's bytes: the
// graph's nodes (op type, inputs, outputs) and its initializers (name,
// dims, data type and the raw little-endian data, left in the file). Any
// other field is skipped by its wire type.

// errFormat marks a file that is not a well-formed ONNX model.
var errFormat = errors.New("not a valid ONNX model file")

// Field numbers of onnx.proto.
const (
	modelGraph = 7

	graphNode        = 1
	graphInitializer = 5

	nodeInput  = 1
	nodeOutput = 2
	nodeOpType = 4

	tensorDims         = 1
	tensorDataType     = 2
	tensorFloatData    = 4
	tensorName         = 8
	tensorRawData      = 9
	tensorDataLocation = 14

	// onnxFloat and onnxInt64 are TensorProto.DataType values.
	onnxFloat = 1
	onnxInt64 = 7
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// onnxTensor is an initializer; data aliases the file's bytes.
type onnxTensor struct {
	name     string
	dims     []int
	dataType int
	data     []byte // raw_data, or float_data's packed bytes
	external bool   // the data lives in another file
}

// onnxNode is one operator of the graph.
type onnxNode struct {
	op              string
	inputs, outputs []string
}

// onnxGraph is the part of the model the encoder is built from.
type onnxGraph struct {
	nodes []onnxNode
	inits map[string]*onnxTensor
}

// pbReader walks one protobuf message's fields.
type pbReader struct {
	buf []byte
	off int
}

func (r *pbReader) done() bool { return r.off >= len(r.buf) }

func (r *pbReader) varint() (uint64, error) {
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint at offset %d", errFormat, r.off)
	}
	r.off += n
	return v, nil
}

// field reads the next field's number and wire type, and its value: a
// varint's value in v, a length-delimited field's bytes in b; fixed-size
// values are skipped.
func (r *pbReader) field() (num int, wire int, v uint64, b []byte, err error) {
	key, err := r.varint()
	if err != nil {
		return 0, 0, 0, nil, err
	}
	num, wire = int(key>>3), int(key&7)
	if num == 0 {
		return 0, 0, 0, nil, fmt.Errorf("%w: field number 0 at offset %d", errFormat, r.off)
	}
	switch wire {
	case wireVarint:
		v, err = r.varint()
	case wireFixed64:
		err = r.skip(8)
	case wireFixed32:
		err = r.skip(4)
	case wireBytes:
		var n uint64
		if n, err = r.varint(); err == nil {
			start := r.off
			if err = r.skip(n); err == nil {
				b = r.buf[start:r.off]
			}
		}
	default:
		err = fmt.Errorf("%w: unsupported wire type %d of field %d at offset %d", errFormat, wire, num, r.off)
	}
	return num, wire, v, b, err
}

func (r *pbReader) skip(n uint64) error {
	if n > uint64(len(r.buf)-r.off) {
		return fmt.Errorf("%w: truncated: %d bytes needed at offset %d, %d left", errFormat, n, r.off, len(r.buf)-r.off)
	}
	r.off += int(n)
	return nil
}

// readONNX decodes the graph of a ModelProto. The returned tensors' data
// alias data.
func readONNX(data []byte) (*onnxGraph, error) {
	r := &pbReader{buf: data}
	var graph []byte
	for !r.done() {
		num, wire, _, b, err := r.field()
		if err != nil {
			return nil, err
		}
		if num == modelGraph && wire == wireBytes {
			graph = b
		}
	}
	if graph == nil {
		return nil, fmt.Errorf("%w: no graph", errFormat)
	}
	return readGraph(graph)
}

func readGraph(data []byte) (*onnxGraph, error) {
	g := &onnxGraph{inits: map[string]*onnxTensor{}}
	r := &pbReader{buf: data}
	for !r.done() {
		num, wire, _, b, err := r.field()
		if err != nil {
			return nil, fmt.Errorf("graph: %w", err)
		}
		if wire != wireBytes {
			continue
		}
		switch num {
		case graphNode:
			n, err := readNode(b)
			if err != nil {
				return nil, fmt.Errorf("node %d: %w", len(g.nodes), err)
			}
			g.nodes = append(g.nodes, n)
		case graphInitializer:
			t, err := readTensor(b)
			if err != nil {
				return nil, fmt.Errorf("initializer %d: %w", len(g.inits), err)
			}
			if _, dup := g.inits[t.name]; dup {
				return nil, fmt.Errorf("%w: initializer %q appears twice", errFormat, t.name)
			}
			g.inits[t.name] = t
		}
	}
	return g, nil
}

func readNode(data []byte) (onnxNode, error) {
	var n onnxNode
	r := &pbReader{buf: data}
	for !r.done() {
		num, wire, _, b, err := r.field()
		if err != nil {
			return n, err
		}
		if wire != wireBytes {
			continue
		}
		switch num {
		case nodeInput:
			n.inputs = append(n.inputs, string(b))
		case nodeOutput:
			n.outputs = append(n.outputs, string(b))
		case nodeOpType:
			n.op = string(b)
		}
	}
	return n, nil
}

func readTensor(data []byte) (*onnxTensor, error) {
	t := &onnxTensor{}
	r := &pbReader{buf: data}
	for !r.done() {
		num, wire, v, b, err := r.field()
		if err != nil {
			return nil, err
		}
		switch {
		case num == tensorDims && wire == wireVarint:
			t.dims = append(t.dims, int(int64(v)))
		case num == tensorDims && wire == wireBytes:
			if t.dims, err = appendPackedVarints(t.dims, b); err != nil {
				return nil, err
			}
		case num == tensorDataType && wire == wireVarint:
			t.dataType = int(int32(v))
		case num == tensorName && wire == wireBytes:
			t.name = string(b)
		case (num == tensorRawData || num == tensorFloatData) && wire == wireBytes:
			t.data = b
		case num == tensorDataLocation && wire == wireVarint:
			t.external = v == 1
		}
	}
	return t, nil
}

func appendPackedVarints(dst []int, b []byte) ([]int, error) {
	r := &pbReader{buf: b}
	for !r.done() {
		v, err := r.varint()
		if err != nil {
			return nil, err
		}
		dst = append(dst, int(int64(v)))
	}
	return dst, nil
}
