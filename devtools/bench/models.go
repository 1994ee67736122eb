package bench

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/llm/bge"
	"github.com/vaultask/vaultask/llm/builtin"
	"github.com/vaultask/vaultask/llm/e5"
	"github.com/vaultask/vaultask/llm/uselite"
	"github.com/vaultask/vaultask/vault"
)

// builtinModel is a built-in embedding model a run measures: its name in
// -models (its spec's, as the fetch takes it), the label its rows carry,
// its model id, the folder the fetch installs its files in, and the
// issues' targets for it.
type builtinModel struct {
	name, label, id, dir string
	// space is the vector space vaultask embeds into with the model as
	// configured by default (its prefixes are part of it).
	space   vault.EmbeddingSpace
	targets modelTargets
}

// modelTargets are the targets that depend on the model: issue 13's for
// USE-lite, the built-in model then; issue 35's for e5 and bge.
type modelTargets struct {
	// ttftAdded is the time to first token vaultask adds (ms, median).
	ttftAdded float64
	// vectorFresh is write → found by vector search (ms, p99), read at the
	// background loads up to vectorFreshLoad notes/s.
	vectorFresh     float64
	vectorFreshLoad int
}

var (
	useLite = newBuiltinModel(&uselite.Spec, "USE-lite",
		modelTargets{ttftAdded: 15, vectorFresh: 2000, vectorFreshLoad: math.MaxInt})
	e5Small = newBuiltinModel(&e5.Spec, "e5",
		modelTargets{ttftAdded: 25, vectorFresh: 5000, vectorFreshLoad: 10})
	bgeSmall = newBuiltinModel(&bge.Spec, "bge",
		modelTargets{ttftAdded: 25, vectorFresh: 5000, vectorFreshLoad: 10})
	builtinModels = []builtinModel{useLite, e5Small, bgeSmall}
)

// DefaultModels are the models a run measures unless told otherwise. The
// first is the one the others' rows are compared with, and the one the
// sections that take a single model (3, 6 and 8) run on.
var DefaultModels = []string{useLite.name, bgeSmall.name}

func newBuiltinModel(b *builtin.Spec, label string, t modelTargets) builtinModel {
	spec, err := llm.ResolveEmbedding(b.ID, 0, nil)
	if err != nil {
		panic(fmt.Sprintf("bench: the built-in model %s: %v", b.ID, err))
	}
	return builtinModel{name: b.Name, label: label, id: b.ID, dir: b.Dir, targets: t,
		space: vault.EmbeddingSpace{Model: spec.Model, Dim: spec.Dim, QueryPrefix: spec.Prefixes.Query, DocumentPrefix: spec.Prefixes.Document, Files: spec.Files}}
}

// modelsNamed are the built-in models of names, in that order.
func modelsNamed(names []string) ([]*modelRun, error) {
	var out []*modelRun
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if seen[n] {
			return nil, fmt.Errorf("-models names %q twice", n)
		}
		seen[n] = true
		i := -1
		for j, m := range builtinModels {
			if m.name == n {
				i = j
			}
		}
		if i < 0 {
			known := make([]string, len(builtinModels))
			for j, m := range builtinModels {
				known[j] = m.name
			}
			return nil, fmt.Errorf("-models: %q is not a built-in model (%s)", n, strings.Join(known, ", "))
		}
		out = append(out, &modelRun{builtinModel: builtinModels[i]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-models names no model")
	}
	return out, nil
}

// load loads the model as vaultask does, its calls spread over workers
// goroutines (0: GOMAXPROCS). USE-lite spreads its windows over GOMAXPROCS
// whatever workers says.
func (m builtinModel) load(workers int) (*llm.Embedding, error) {
	return llm.NewEmbedder(m.id, llm.EmbedderOptions{BuiltinDir: builtinDir(), Workers: workers})
}

// installed is the model's folder in the built-in models' directory.
func (m builtinModel) installed() string { return filepath.Join(builtinDir(), m.dir) }

// builtinDir is the built-in models' directory the run loads them from and
// points its vaultask children at: VAULTASK_MODELS__BUILTIN_DIR when set
// (where `vaultask fetch-model` then puts them, and where the models'
// tests look), else the default one.
func builtinDir() string {
	if d := os.Getenv("VAULTASK_MODELS__BUILTIN_DIR"); d != "" {
		return d
	}
	return llm.DefaultBuiltinDir()
}

// diskBytes is the size of the files in dir: what `vaultask fetch-model` installs
// for one model.
func diskBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	return n, err
}

// modelRun is what a run built and measured with one model.
type modelRun struct {
	builtinModel
	emb  *llm.Embedding
	pool [][]float32
	// corpusIndex is the corpus indexed with this model's vectors by
	// section 2 (completed with pool vectors), the existing index the serve
	// sections start on with this model.
	corpusIndex string
	// What section 2 measured with this model's vectors, and how many
	// chunks of the corpus index got pool vectors after its run stopped at
	// the vector budget.
	corpusVec, genVec rates
	completed         int
}

// embedder loads the model once per run, on every core.
func (m *modelRun) embedder() (*llm.Embedding, error) {
	if m.emb == nil {
		e, err := m.load(0)
		if err != nil {
			return nil, err
		}
		m.emb = e
	}
	return m.emb, nil
}

// poolVectors are real vectors of this model for generated passages,
// embedded once and cached (see poolEmbedder).
func (m *modelRun) poolVectors(ctx context.Context, r *run) ([][]float32, error) {
	if m.pool != nil {
		return m.pool, nil
	}
	dir := filepath.Join(r.cfg.Cache, GeneratorVersion)
	path := filepath.Join(dir, fmt.Sprintf("pool-%s-%d.f32", m.name, r.sz.pool))
	if b, err := os.ReadFile(path); err == nil && len(b) == r.sz.pool*m.space.Dim*4 {
		m.pool = decodeVectors(b, m.space.Dim)
		return m.pool, nil
	}
	emb, err := m.embedder()
	if err != nil {
		return nil, err
	}
	texts := make([]string, r.sz.pool)
	for i := range texts {
		texts[i] = paragraph(rng(i, 17), 5)
	}
	r.log.Info("embedding the vector pool", keyModel, m.name, keyPassages, len(texts))
	vs, err := emb.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, encodeVectors(vs), 0o644); err != nil {
		return nil, err
	}
	m.pool = vs
	return vs, nil
}

// first is the model the others are compared with.
func (r *run) first() *modelRun { return r.models[0] }

// modelNames is the -models list of this run.
func (r *run) modelNames() string {
	names := make([]string, len(r.models))
	for i, m := range r.models {
		names[i] = m.name
	}
	return strings.Join(names, ",")
}

// reproduce is the command that runs the sections in only again.
func (r *run) reproduce(only string) string {
	return fmt.Sprintf("go run -tags sqlite_fts5 ./devtools/cmd/bench -only %s -size %s -models %s", only, r.cfg.Size, r.modelNames())
}

// sameRun names the first model's figure as the baseline of another's.
func (r *run) sameRun(what string) string {
	return fmt.Sprintf("%s%s, same run", r.first().label, what)
}

// modelLabels lists the run's models' labels.
func (r *run) modelLabels() string {
	labels := make([]string, len(r.models))
	for i, m := range r.models {
		labels[i] = m.label
	}
	return strings.Join(labels, ", ")
}
