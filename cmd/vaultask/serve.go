package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/index"
	"github.com/vaultask/vaultask/llm"
	"github.com/vaultask/vaultask/rag/web"
	"github.com/vaultask/vaultask/transport"
	"github.com/vaultask/vaultask/vault"
	"github.com/vaultask/vaultask/vectorizer"
)

// Shutdown bounds: running answers get drainTimeout to finish once a signal
// comes; the feed then finishes its batch and its checkpoint. The last fifth
// of it is for the answers still running then: they are cancelled and end
// their streams with a last frame saying why, which the connection must still
// carry (a container runtime's kill often follows its stop signal after 10 s).
const drainTimeout = 10 * time.Second

// service is everything `vaultask serve` runs, under one owner: the index,
// the source that follows the vault into it, the background embedder, the
// answering pipeline and the HTTP surface. start brings them up in order,
// stop takes them down in reverse.
type service struct {
	cfg   config.Config
	log   *slog.Logger
	store *index.Store
	src   source
	feed  follower
	vec   *vectorizer.Vectorizer
	// embErr is why there is no vectorizer: the embedder could not be
	// built; backlog logs the vectorizer's long drains.
	embErr  error
	backlog *backlogLog
	// embeds reports whether questions are embedded in a space.
	embeds func(vault.EmbeddingSpace) bool
	events *transport.Events
	api    *transport.Server
	http   *http.Server
	ln     net.Listener
	base   context.CancelCauseFunc
	start  time.Time
	drain  time.Duration
}

func runServe(ctx context.Context, m *Main, args []string) error {
	fset, cfgPath := m.newFlagSet("serve", "serve")
	cfg, log, err := m.configure(fset, cfgPath, args)
	if err != nil {
		return err
	}
	svc := &service{cfg: cfg, log: log, start: time.Now(), events: transport.NewEvents(1000, 256), drain: cmp.Or(m.drain, drainTimeout)}
	if err := svc.open(ctx, m); err != nil {
		svc.close(context.WithoutCancel(ctx))
		return err
	}
	fmt.Fprintf(m.Stdout, "vaultask %s serving on http://%s (chat at /chat, admin at /admin, OpenAI-compatible API at /v1, MCP at /mcp, status at /status)\n", buildVersion(), svc.ln.Addr())
	serveErr := make(chan error, 1)
	go func() { serveErr <- svc.http.Serve(svc.ln) }()
	var stopErr error
	select {
	case <-ctx.Done():
		// A second signal now kills the process at once.
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		log.Info("stopping: letting running answers finish", keyWithin, svc.drain)
	case <-svc.feed.Done():
		log.Error("the vault's feed stopped, and retrying cannot help: stopping")
	case err := <-serveErr:
		stopErr = fmt.Errorf("http server: %w", err)
	}
	return errors.Join(stopErr, svc.close(context.WithoutCancel(ctx)))
}

// open starts everything; on error the caller closes what was started.
func (svc *service) open(ctx context.Context, m *Main) error {
	cfg, log := svc.cfg, svc.log
	opts, err := storeOptions(cfg, log)
	if err != nil {
		return err
	}
	if svc.store, err = openIndex(ctx, opts); err != nil {
		return err
	}
	state := &cachedState{read: svc.status, now: time.Now}
	p, err := m.newPipeline(cfg, svc.store, log, true, state.state)
	if err != nil {
		return err
	}
	if svc.src, err = newSource(cfg, log, ""); err != nil {
		return err
	}
	svc.feed = svc.src.follower(svc.store.Feed(), feedHooks{notes: svc.publishNotes, reconciled: svc.publishReconcile})
	svc.embeds = m.embedsSpace
	svc.vec = svc.newVectorizer(m)
	apiKey := cfg.API.Key.Reveal()
	if apiKey == "" {
		log.Warn("no API key (VAULTASK_API__KEY): the API, MCP, events and status are open to anyone who can reach " + cfg.API.Listen)
	}
	if cfg.API.AdminKey == "" {
		log.Info("no admin key (VAULTASK_API__ADMIN_KEY): /admin shows its page but refuses its data")
	}
	admin, err := m.adminOptions(cfg)
	if err != nil {
		return err
	}
	sessionKey, err := loadSessionKey(sessionKeyPath(cfg.Index.Path), log)
	if err != nil {
		return err
	}
	svc.api, err = transport.New(transport.Options{
		Answerer: p, Notes: svc.store.Browse(), Status: svc.status, Events: svc.events,
		APIKey: apiKey, MaxConcurrent: cfg.API.MaxConcurrent, MaxBodyBytes: int64(cfg.API.MaxRequestBytes),
		Slots: transport.SlotOptions{ForAnswers: cfg.API.ReservedForAnswers, ForTools: cfg.API.ReservedForTools,
			Wait: cfg.API.SlotWait, MaxWaiting: cfg.API.MaxWaiting},
		CORSOrigins: cfg.API.CORSOrigins, TrustedHosts: cfg.API.TrustedHosts, Version: buildVersion(),
		ObsidianVault: cfg.API.ObsidianVault, Admin: admin, Logger: log,
		SessionKey: sessionKey, MaxMCPSessions: cfg.MCP.MaxSessions, MCPSessionIdle: cfg.MCP.SessionIdle,
	})
	if err != nil {
		return err
	}
	base, err := svc.listen(ctx, svc.api)
	if err != nil {
		return err
	}
	// The feed and the embedder follow the vault from here on; the API
	// answers meanwhile from what is indexed so far.
	if err := svc.feed.Open(ctx); err != nil {
		return err
	}
	if svc.vec != nil {
		if err := svc.vec.Open(ctx); err != nil {
			return err
		}
	}
	go svc.watchFeed(base)
	return nil
}

// newVectorizer is the background embedder, or nil when there is no embedder
// (svc.embErr says why): new and changed notes are then searchable by full
// text only, and questions too unless the index's vectors are of a model
// that loaded (the old one, while a new one cannot load).
func (svc *service) newVectorizer(m *Main) *vectorizer.Vectorizer {
	emb, err := m.embedder(svc.cfg)
	if err != nil {
		svc.embErr = err
		active := svc.store.Search().ActiveSpace()
		if m.embedsSpace(active) {
			svc.log.Warn("no embedder: new and changed notes are found by full text only until it loads; questions still search the index's vectors of "+active.String(),
				keyModel, svc.cfg.Models.Embedding, keyErr, err)
		} else {
			svc.log.Warn("no embedder: notes and questions are searched by full text only until it loads", keyModel, svc.cfg.Models.Embedding, keyErr, err)
		}
		return nil
	}
	svc.backlog = &backlogLog{log: svc.log, now: m.clock, waiting: svc.store.Vectors().EmbeddingWaiting}
	opts := m.vectorizerOptions(svc.cfg, svc.store, emb, svc.log)
	opts.OnBatch = svc.backlog.batch
	opts.OnCaughtUp = func(n, open int) {
		svc.backlog.caughtUp()
		ev := transport.Event{Type: transport.EventEmbeddingDone, Data: map[string]int{"embedded": n}}
		if open > 0 {
			ev.OpenData = map[string]int{"embedded": open}
		}
		svc.events.Publish(ev)
	}
	return vectorizer.New(svc.store.Vectors(), emb, opts)
}

// listen opens the API's listener and its server, whose requests run under
// the returned base context: cancelled at shutdown, not by ctx.
func (svc *service) listen(ctx context.Context, handler http.Handler) (context.Context, error) {
	var err error
	if svc.ln, err = net.Listen("tcp", svc.cfg.API.Listen); err != nil {
		return nil, fmt.Errorf("listen on %s (api.listen, VAULTASK_API__LISTEN): %w", svc.cfg.API.Listen, err)
	}
	base, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	svc.base = cancel
	svc.http = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: it would cut a long answer's stream; the SSE
		// handlers clear their deadlines anyway.
		BaseContext: func(net.Listener) context.Context { return base },
		ErrorLog:    slog.NewLogLogger(svc.log.Handler(), slog.LevelDebug),
	}
	return base, nil
}

// adminOptions are what /admin needs: the overrides file as this process
// read it, the running values, and the startup validation for a change,
// which it applies over the running configuration and under the
// environment, as the next start will.
func (m *Main) adminOptions(cfg config.Config) (transport.AdminOptions, error) {
	overrides, err := config.OpenOverrides(config.OverridesFile(m.Env))
	if err != nil {
		return transport.AdminOptions{}, err
	}
	var providers []transport.WebProvider
	for _, name := range web.Known() {
		key := web.KeyEnv(name)
		providers = append(providers, transport.WebProvider{Name: name, KeyEnv: key, Ready: key == "" || m.getenv(key) != ""})
	}
	return transport.AdminOptions{
		Key: cfg.API.AdminKey.Reveal(), Overrides: overrides,
		Running: cfg.Values(), FromEnv: config.EnvKeys(m.Env),
		Check: func(doc []byte) (map[string]any, error) {
			next, err := cfg.WithOverrides(doc, "overrides")
			if err == nil {
				next, err = next.WithEnv(m.Env)
			}
			if err == nil {
				err = next.Validate()
			}
			if err == nil {
				err = m.checkConfig(next)
			}
			if err != nil {
				return nil, err
			}
			return next.Values(), nil
		},
		GenerationModels: llm.SuggestedGenerationModels, WebProviders: providers,
	}, nil
}

// close stops everything open, in reverse order: the event streams ended
// with a last event and the idle MCP streams at once (the drain is for
// answers, which they would hold up to its end), no new requests and the
// running answers finished (or
// cancelled near the end of the drain time, their streams ending with an
// error saying why and [DONE]), then the feed finishes its batch and
// checkpoint, the embedder stops, the index closes.
func (svc *service) close(ctx context.Context) error {
	var errs []error
	svc.events.Close()
	if svc.api != nil {
		svc.api.EndStreams()
	}
	if svc.http != nil {
		// Shutdown waits for the handlers, so the cancelled answers' last
		// frames are written before their connections close.
		cut := time.AfterFunc(svc.drain-svc.drain/5, func() {
			svc.log.Warn("requests still running near the end of the drain time: cancelling them", keyAfter, svc.drain-svc.drain/5)
			svc.base(transport.ErrShutdown)
		})
		drain, cancel := context.WithTimeout(ctx, svc.drain)
		err := svc.http.Shutdown(drain)
		cancel()
		cut.Stop()
		if errors.Is(err, context.DeadlineExceeded) {
			svc.log.Warn("requests still running after the drain time: closing their connections", keyAfter, svc.drain)
			errs = append(errs, svc.http.Close())
		}
		svc.base(transport.ErrShutdown)
	}
	if svc.ln != nil { // Shutdown closes it only if Serve ran: not when the start failed after listening
		if err := svc.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	closing, cancel := context.WithTimeout(ctx, closeTimeout)
	defer cancel()
	if svc.feed != nil {
		errs = append(errs, feedSetting(svc.feed.Close(closing)))
	}
	if svc.vec != nil {
		errs = append(errs, svc.vec.Close(closing))
	}
	if svc.src != nil {
		errs = append(errs, svc.src.close())
	}
	if svc.store != nil {
		errs = append(errs, svc.store.Close())
	}
	return errors.Join(errs...)
}

// watchFeed turns the follower's connection state into connected and
// error events, checking it every second until ctx ends. A folder has no
// connection to watch.
func (svc *service) watchFeed(ctx context.Context) {
	if _, ok := svc.feed.health(); !ok {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	connected, failing := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-svc.feed.Done():
			return
		case <-t.C:
		}
		h, _ := svc.feed.health()
		if h.connected != connected {
			connected = h.connected
			data := map[string]bool{"connected": connected}
			svc.events.Publish(transport.Event{Type: transport.EventFeedConnected, Data: data, OpenData: data})
		}
		if h.failing != failing {
			failing = h.failing
			// The error may name the document that failed.
			svc.events.Publish(transport.Event{Type: transport.EventFeedFailing, Data: map[string]any{"failing": failing, "error": h.lastError},
				OpenData: map[string]bool{"failing": failing}})
		}
	}
}

// status assembles /status from the feed, the index and the embedder.
func (svc *service) status(ctx context.Context) transport.Status {
	st := transport.Status{Version: buildVersion(), StartedAt: svc.start, Feed: transport.FeedStatus{Source: svc.cfg.Vault.Source, Lag: -1}}
	st.Embedder = svc.embedderStatus()
	svc.feed.status(&st)
	select {
	case <-svc.feed.Done():
		st.Feed.Stopped = "see the server's log"
	default:
	}
	st.Feed.State = st.Feed.Phase()
	is, err := svc.store.Stats(ctx)
	if err != nil {
		svc.log.Error("index stats", keyErr, err)
		st.IndexError = "the index could not be read; the server's log says why"
		return st
	}
	st.Index = transport.IndexStatus{Path: svc.cfg.Index.Path, Notes: is.Notes, OpenNotes: is.OpenNotes, PersonalNotes: is.PersonalNotes,
		Chunks: is.Chunks, Vectors: is.Vectors, EmbeddingBacklog: is.EmbeddingBacklog, OpenChunks: is.OpenChunks, OpenVectors: is.OpenVectors,
		OpenEmbeddingBacklog: is.OpenEmbeddingBacklog, EmbeddingStaged: is.EmbeddingStaged, OpenEmbeddingStaged: is.OpenEmbeddingStaged,
		VectorSearch: svc.embeds(svc.store.Search().ActiveSpace()), PendingNotes: is.PendingNotes,
		IncompleteNotes: is.IncompleteNotes, SkippedNotes: is.SkippedNotes, FileBytes: is.FileBytes, EmbeddingModel: is.EmbeddingModel}
	if r := is.Reembedding; r != nil {
		st.Index.Reembedding = &transport.Reembedding{Model: r.Model, Embedded: r.Embedded, Total: r.Total, OpenEmbedded: r.OpenEmbedded, OpenTotal: r.OpenTotal,
			VectorSearch: svc.vec != nil && svc.vec.Status().Active}
		if e := st.Embedder.State; e == transport.EmbedderUnavailable || e == transport.EmbedderFailing {
			st.Index.Reembedding.Stalled = "waiting for the embedder (" + e + ")"
		}
	}
	if e := &st.Embedder; e.ChunksPerSecond > 0 {
		e.SecondsLeft = math.Round(float64(is.EmbeddingBacklog-is.EmbeddingStaged) / e.ChunksPerSecond)
	}
	return st
}

// embedderStatus is the background embedder's state: unavailable, with
// why, when it could not be built; else failing, embedding (with the
// drain's rate) or idle, as the vectorizer reports it.
func (svc *service) embedderStatus() transport.EmbedderStatus {
	e := transport.EmbedderStatus{Model: svc.cfg.Models.Embedding}
	if svc.vec == nil {
		e.State, e.Since = transport.EmbedderUnavailable, svc.start
		if svc.embErr != nil {
			e.LastError = svc.embErr.Error()
		}
		return e
	}
	vs := svc.vec.Status()
	e.Available, e.LastError, e.Since, e.Embedded, e.OpenEmbedded = vs.Available, vs.LastError, vs.Since, vs.Embedded, vs.OpenEmbedded
	switch {
	case !vs.Available:
		e.State = transport.EmbedderFailing
	case vs.Busy:
		e.State, e.ChunksPerSecond = transport.EmbedderEmbedding, svc.backlog.chunksPerSecond()
	default:
		e.State = transport.EmbedderIdle
	}
	return e
}

// seqLag is how many changes the checkpoint is behind the database, when
// both sequences start with a number.
func seqLag(updateSeq, checkpoint string) (int64, bool) {
	var a, b int64
	if _, err := fmt.Sscanf(updateSeq, "%d", &a); err != nil {
		return 0, false
	}
	if _, err := fmt.Sscanf(checkpoint, "%d", &b); err != nil {
		return 0, false
	}
	return max(a-b, 0), true
}
