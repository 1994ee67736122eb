package vectorizer

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/internal/retry"
	"github.com/vaultask/vaultask/internal/routine"
)

// Embedder is what the vectorizer needs from an embedding model: one vector
// per passage, in order, embedded as passages to be found (a model's
// document prefix). llm's embedders satisfy it.
type Embedder interface {
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
}

// Options configure a Vectorizer; zero fields take the defaults.
type Options struct {
	// BatchChunks bounds the chunks embedded per call and transaction, and
	// SliceChunks how many of them one note takes per turn: batches are
	// dealt out a turn per waiting note, notes not begun first, so that a
	// large note is embedded in slices with the notes behind it served in
	// between (see index.Vectors.Backlog). Defaults: 64 and 32.
	BatchChunks int
	SliceChunks int
	// BatchTime bounds a batch by time: it is cut to the text the embedder
	// got through in that long at the rate measured on the batches before
	// (at least one chunk), so that a note written meanwhile waits about
	// one batch of a slow model, not 64 chunks of it. Default 1s.
	BatchTime  time.Duration
	Idle       time.Duration // re-check the backlog this often without a signal; default 1m
	MinBackoff time.Duration // first retry after a failure; default 1s
	MaxBackoff time.Duration // retry cap; default 2m
	Logger     *slog.Logger
	// Clock times the waits, so tests control them; default retry.System.
	Clock retry.Clock
	// OnBatch, when set, is called after each batch's vectors are stored,
	// from the goroutine that embeds (the vectorizer's, or Drain's caller),
	// with how many it stored and how many of them belong to open notes:
	// progress, for a line or a log.
	OnBatch func(ctx context.Context, written, open int)
	// OnCaughtUp, when set, is called from the vectorizer's goroutine each
	// time it has embedded chunks and none is left waiting, with how many,
	// and how many of them belong to open notes.
	OnCaughtUp func(embedded, open int)
	// Active, when set, is the model of the index's active space, the one
	// searches use while the index re-embeds into another: the notes written
	// meanwhile get their vector there too, before each batch of the
	// re-embedding (index.Vectors.ActiveBacklog), so that they are found by
	// vector search before the switch, not by full text alone.
	Active Embedder
}

// firstRate is the rate (bytes of text per second) the first batch is cut
// to, before one is measured: about 4,000 tokens a second, the slowest
// built-in model's (bge's) on 2 cores.
const firstRate = 16 << 10

// Status is the embedder's health, for stats and the status endpoint.
type Status struct {
	Available bool      `json:"available"` // false while the embedding host fails
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"` // when Available last changed
	// Embedded counts the chunks embedded since the vectorizer started (in
	// the space searches use too, see Active), and OpenEmbedded those of
	// open notes (see Pending.Open).
	Embedded     int64 `json:"embedded"`
	OpenEmbedded int64 `json:"open_embedded"`
	// Busy is set while it has chunks in hand: from the first batch of a
	// backlog until the backlog is empty or embedding fails.
	Busy bool `json:"busy"`
	// Active is set while Options.Active embeds the notes written during
	// a re-embedding in the space searches use: from New until it fails.
	Active bool `json:"active"`
}

// Vectorizer embeds the backlog in the background: chunks are searchable by
// FTS as soon as their note commits, and gain a vector here, in their own
// transactions, so embedding never slows the feed. While the embedding host
// is down it backs off and the index stays FTS-only; it recovers by itself.
// Open starts it in its own goroutine, Close stops it; Drain embeds the
// backlog once, for a one-shot command.
type Vectorizer struct {
	store  *index.Vectors
	emb    Embedder
	active Embedder // Options.Active, until it fails
	opts   Options
	log    *slog.Logger
	life   routine.Routine

	// rate is the embedder's measured throughput in bytes of text per
	// second (0 until measured), which sizes the batches; only the
	// vectorizer's goroutine (or Drain's caller) uses it.
	rate float64

	mu     sync.Mutex
	status Status
}

// New returns a vectorizer that fills the backlog of s with e.
func New(s *index.Vectors, e Embedder, opts Options) *Vectorizer {
	if opts.BatchChunks <= 0 {
		opts.BatchChunks = 64
	}
	if opts.SliceChunks <= 0 {
		opts.SliceChunks = min(32, opts.BatchChunks)
	}
	if opts.BatchTime <= 0 {
		opts.BatchTime = time.Second
	}
	if opts.Idle <= 0 {
		opts.Idle = time.Minute
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(2*time.Minute, opts.MinBackoff)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = retry.System
	}
	return &Vectorizer{store: s, emb: e, active: opts.Active, opts: opts, log: opts.Logger.With(logComponent, "vectorizer"),
		status: Status{Available: true, Since: time.Now(), Active: opts.Active != nil}}
}

// Status reports the vectorizer's health.
func (v *Vectorizer) Status() Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.status
}

// Drain embeds the backlog until it is empty and returns how many chunks it
// embedded. The first embedding failure is returned as is.
func (v *Vectorizer) Drain(ctx context.Context) (int, error) {
	n, _, err := v.drain(ctx)
	return n, err
}

// drain is Drain that also counts the open chunks embedded. Once the
// backlog is empty, an index re-embedding into a new space switches to it
// (index.Vectors.PromoteFilled).
func (v *Vectorizer) drain(ctx context.Context) (total, open int, err error) {
	defer v.setBusy(false)
	for {
		n, o, err := v.stepActive(ctx)
		total += n
		open += o
		if err != nil {
			return total, open, err
		}
		n, o, empty, err := v.step(ctx)
		total += n
		open += o
		if err != nil {
			return total, open, err
		}
		if empty {
			_, err := v.store.PromoteFilled(ctx)
			return total, open, err
		}
	}
}

func (v *Vectorizer) setBusy(busy bool) {
	v.mu.Lock()
	v.status.Busy = busy
	v.mu.Unlock()
}

// cut is the prefix of pending (at least one chunk) whose text the
// embedder gets through in BatchTime at its measured rate.
func (v *Vectorizer) cut(pending []index.Pending) []index.Pending {
	rate := v.rate
	if rate == 0 {
		rate = firstRate
	}
	budget := rate * v.opts.BatchTime.Seconds()
	n := 0
	for i, p := range pending {
		if n += len(p.Text); i > 0 && float64(n) > budget {
			return pending[:i]
		}
	}
	return pending
}

// measure folds a call that embedded bytes of text in d into the rate,
// half of it the new figure, so a batch of other texts moves it at once
// and one odd batch does not take it all the way.
func (v *Vectorizer) measure(bytes int, d time.Duration) {
	if d <= 0 {
		return
	}
	r := float64(bytes) / d.Seconds()
	if v.rate > 0 {
		r = (v.rate + r) / 2
	}
	v.rate = r
}

// step embeds one batch of the backlog and returns how many vectors it
// wrote and how many of them are of open chunks; empty reports a backlog
// with nothing left to embed.
func (v *Vectorizer) step(ctx context.Context) (written, open int, empty bool, err error) {
	pending, err := v.store.Backlog(ctx, v.opts.BatchChunks, v.opts.SliceChunks)
	if err != nil || len(pending) == 0 {
		return 0, 0, err == nil, err
	}
	v.setBusy(true)
	pending = v.cut(pending)
	texts := make([]string, len(pending))
	bytes := 0
	for i, p := range pending {
		texts[i] = p.Text
		bytes += len(p.Text)
	}
	start := v.opts.Clock.Now()
	vecs, err := v.emb.EmbedDocuments(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("embed: %w", err)
	}
	v.measure(bytes, v.opts.Clock.Now().Sub(start))
	vs := make([]index.Vector, len(pending))
	for i, p := range pending {
		vs[i] = index.Vector{RowID: p.RowID, Text: p.Text, Embedding: vecs[i]}
	}
	// Chunks rewritten meanwhile are dropped by PutVectors; the next
	// Backlog read returns their new text.
	n, err := v.store.PutVectors(ctx, vs)
	if err != nil {
		return 0, 0, false, err
	}
	open = v.count(pending, n)
	if v.opts.OnBatch != nil {
		v.opts.OnBatch(ctx, n, open)
	}
	return n, open, false, nil
}

// stepActive embeds the notes of the active space's backlog that one
// batch holds (a larger note whole, a batch at a time) with Options.Active
// and returns how many vectors it wrote and how many of them are of open
// chunks. When that model fails it is not asked again: the re-embedding
// goes on, and the notes written meanwhile are found by full text until
// the switch.
func (v *Vectorizer) stepActive(ctx context.Context) (written, open int, err error) {
	if v.active == nil {
		return 0, 0, nil
	}
	space, pending, err := v.store.ActiveBacklog(ctx, v.opts.BatchChunks)
	if err != nil || len(pending) == 0 {
		return 0, 0, err
	}
	v.setBusy(true)
	vs := make([]index.Vector, 0, len(pending))
	for batch := range slices.Chunk(pending, v.opts.BatchChunks) {
		texts := make([]string, len(batch))
		for i, p := range batch {
			texts[i] = p.Text
		}
		vecs, err := v.active.EmbedDocuments(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
		}
		if ctx.Err() != nil {
			return 0, 0, ctx.Err()
		}
		if err != nil {
			v.mu.Lock()
			v.active, v.status.Active = nil, false
			v.mu.Unlock()
			v.log.Warn("embedding in the space searches use failed: notes written while re-embedding are found by full text until the switch", keyModel, space.String(), keyErr, err)
			return 0, 0, nil
		}
		for i, p := range batch {
			vs = append(vs, index.Vector{RowID: p.RowID, Text: p.Text, Embedding: vecs[i]})
		}
	}
	n, err := v.store.PutActiveVectors(ctx, space, vs)
	if err != nil {
		return 0, 0, err
	}
	return n, v.count(pending, n), nil
}

// count adds the n vectors written of pending to the status and returns
// how many of them are of open chunks. The store does not say which
// vectors it dropped (chunks rewritten meanwhile): each dropped one counts
// as open, so that the open count may fall short but never moves for a
// personal chunk.
func (v *Vectorizer) count(pending []index.Pending, n int) (open int) {
	for _, p := range pending {
		if p.Open {
			open++
		}
	}
	open = max(open-(len(pending)-n), 0)
	v.mu.Lock()
	v.status.Embedded += int64(n)
	v.status.OpenEmbedded += int64(open)
	v.mu.Unlock()
	return open
}

// Open starts embedding the backlog whenever the store signals new chunks
// (and every Idle interval) in the vectorizer's own goroutine, until Close.
// Failures back off, capped and jittered; the first failure is logged once
// and so is the recovery.
func (v *Vectorizer) Open(ctx context.Context) error {
	return v.life.Start(ctx, func(ctx context.Context) error {
		v.run(ctx)
		return nil
	})
}

// Close stops the vectorizer and waits for it, at most until ctx is done:
// a batch being embedded is abandoned, and its chunks stay on the backlog.
func (v *Vectorizer) Close(ctx context.Context) error { return v.life.Close(ctx) }

func (v *Vectorizer) run(ctx context.Context) {
	bo := &retry.Backoff{Min: v.opts.MinBackoff, Max: v.opts.MaxBackoff}
	for {
		n, open, err := v.drain(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil && n > 0 && v.opts.OnCaughtUp != nil {
			v.opts.OnCaughtUp(n, open)
		}
		wait := v.opts.Idle
		if err != nil {
			v.fail(err)
			wait = bo.Next()
		} else {
			v.recovered()
			bo.Reset()
		}
		timer := v.opts.Clock.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-v.store.Changed():
		case <-timer.C():
		}
		timer.Stop()
	}
}

func (v *Vectorizer) fail(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.status.LastError = err.Error()
	if v.status.Available {
		v.status.Available = false
		v.status.Since = time.Now()
		v.log.Warn("embedding failed; new chunks are found by full-text search only until the embedder recovers", keyErr, err)
	}
}

func (v *Vectorizer) recovered() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.status.Available {
		v.status.Available = true
		v.status.Since = time.Now()
		v.status.LastError = ""
		v.log.Info("embedding recovered")
	}
}
