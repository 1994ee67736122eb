package uselite

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"slices"
)

// tfjsWeights holds the float32 tensors of a TF.js graph model, by name.
type tfjsWeights struct {
	tensors map[string]tfjsTensor
	err     error // the first failed lookup
}

type tfjsTensor struct {
	shape []int
	data  []float32
}

// readWeights reads model.json's weightsManifest and the shard files it
// names: each group's shards, concatenated, hold its tensors back to back in
// manifest order.
func readWeights(fsys fs.FS) (*tfjsWeights, error) {
	raw, err := fs.ReadFile(fsys, "model.json")
	if err != nil {
		return nil, err
	}
	var manifest struct {
		WeightsManifest []struct {
			Paths   []string `json:"paths"`
			Weights []struct {
				Name  string `json:"name"`
				Shape []int  `json:"shape"`
				Dtype string `json:"dtype"`
			} `json:"weights"`
		} `json:"weightsManifest"`
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		return nil, fmt.Errorf("model.json: %w", err)
	}
	w := &tfjsWeights{tensors: map[string]tfjsTensor{}}
	for _, group := range manifest.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, t := range group.Weights {
			if t.Dtype != "float32" && t.Dtype != "int32" {
				return nil, fmt.Errorf("model.json: %s has dtype %q", t.Name, t.Dtype)
			}
			n := 1
			for _, d := range t.Shape {
				n *= d
			}
			end := off + 4*n
			if end > len(buf) {
				return nil, fmt.Errorf("model.json: %s ends at byte %d of shards holding %d", t.Name, end, len(buf))
			}
			if t.Dtype == "float32" {
				data := make([]float32, n)
				for i := range data {
					data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
				w.tensors[t.Name] = tfjsTensor{shape: t.Shape, data: data}
			}
			off = end
		}
		if off != len(buf) {
			return nil, fmt.Errorf("model.json: manifest covers %d bytes of shards holding %d", off, len(buf))
		}
	}
	return w, nil
}

// get returns the tensor name, which must have the given shape. A missing
// or misshapen tensor is recorded in w.err and yields zeros, so that a
// loader can fetch everything and check the error once.
func (w *tfjsWeights) get(name string, shape ...int) []float32 {
	t, ok := w.tensors[name]
	if !ok || !slices.Equal(t.shape, shape) {
		if w.err == nil {
			if !ok {
				w.err = fmt.Errorf("model.json: no tensor %s", name)
			} else {
				w.err = fmt.Errorf("model.json: %s has shape %v, want %v", name, t.shape, shape)
			}
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		return make([]float32, n)
	}
	return t.data
}

// scalar returns the one-element tensor name.
func (w *tfjsWeights) scalar(name string) float32 {
	return w.get(name)[0]
}
