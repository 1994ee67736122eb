package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vaultask/vaultask/rag"
	"github.com/vaultask/vaultask/tstest/smallvault"
)

func mustSlots(t *testing.T, total int, opts SlotOptions) *slotPool {
	t.Helper()
	p, err := newSlotPool(total, opts, newHeapReturn())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// takeAll takes n slots of kind at once, failing the test on a refusal.
func takeAll(t *testing.T, p *slotPool, kind slotKind, n int) []func() {
	t.Helper()
	var out []func()
	for range n {
		release, err := p.acquire(context.Background(), kind)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, release)
	}
	return out
}

// Neither kind takes the slots kept for the other: tool calls stop at
// three of four with one kept for answers, and the refusal names the
// setting; answers likewise.
func TestSlotsKeptForEachKind(t *testing.T) {
	t.Parallel()
	p := mustSlots(t, 4, SlotOptions{ForAnswers: 1, ForTools: 1})
	ctx := context.Background()
	tools := takeAll(t, p, kindTool, 3)
	_, err := p.acquire(ctx, kindTool)
	if err == nil || !strings.Contains(err.Error(), "MCP tool calls may use 3 of the 4 slots (api.max_concurrent), 1 being kept for answers (api.reserved_for_answers)") {
		t.Fatalf("a fourth tool call with one slot kept for answers: %v", err)
	}
	answer := takeAll(t, p, kindAnswer, 1)
	if _, err := p.acquire(ctx, kindAnswer); err == nil || !strings.Contains(err.Error(), "3 MCP tool calls are running") {
		t.Fatalf("a fifth request of four slots: %v", err)
	}
	for _, release := range append(tools, answer...) {
		release()
	}
	takeAll(t, p, kindAnswer, 3)
	if _, err := p.acquire(ctx, kindAnswer); err == nil || !strings.Contains(err.Error(), "(api.reserved_for_tools)") {
		t.Fatalf("a fourth answer with one slot kept for tool calls: %v", err)
	}
	takeAll(t, p, kindTool, 1)
}

// A request that finds no slot waits in line and gets one as soon as one
// comes free, first come first served within a kind; a waiting answer held
// back by its kind's limit does not hold up a tool call behind it.
func TestSlotsWaitInLine(t *testing.T) {
	t.Parallel()
	p := mustSlots(t, 2, SlotOptions{ForTools: 1, Wait: time.Minute, MaxWaiting: 4})
	answer := takeAll(t, p, kindAnswer, 1)
	tool := takeAll(t, p, kindTool, 1)
	order := make(chan string, 3)
	var wg sync.WaitGroup
	enqueue := func(name string, kind slotKind) {
		before := p.lineLen()
		wg.Go(func() {
			release, err := p.acquire(context.Background(), kind)
			if err != nil {
				t.Error(name, err)
				return
			}
			order <- name
			if kind == kindAnswer {
				release()
			}
		})
		waitFor(t, func() bool { return p.lineLen() == before+1 }) // in line in this order
	}
	enqueue("answer 1", kindAnswer)
	enqueue("answer 2", kindAnswer)
	enqueue("tool", kindTool)
	tool[0]() // answers may hold one slot only (one kept for tools): the tool call behind them gets it
	if got := <-order; got != "tool" {
		t.Fatalf("the freed tool slot went to %s", got)
	}
	answer[0]()
	if first, second := <-order, <-order; first != "answer 1" || second != "answer 2" {
		t.Errorf("answers served as %s, %s; want in the order they came", first, second)
	}
	wg.Wait()
}

// A wait is bounded in time and in length, and a request that goes away
// leaves the line; none of them keeps a place in it.
func TestSlotsWaitIsBounded(t *testing.T) {
	t.Parallel()
	p := mustSlots(t, 1, SlotOptions{Wait: 50 * time.Millisecond, MaxWaiting: 1})
	held := takeAll(t, p, kindTool, 1)

	start := time.Now()
	_, err := p.acquire(context.Background(), kindAnswer)
	if waited := time.Since(start); err == nil || !strings.Contains(err.Error(), "no slot for answers came free within 50ms (api.slot_wait)") || waited < 50*time.Millisecond {
		t.Errorf("after %v: %v; want a refusal after api.slot_wait", waited, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := p.acquire(ctx, kindAnswer)
		gone <- err
	}()
	waitFor(t, func() bool { return p.lineLen() == 1 })
	if _, err := p.acquire(context.Background(), kindAnswer); err == nil || !strings.Contains(err.Error(), "1 more already wait for one (api.max_waiting)") {
		t.Errorf("a second waiter with api.max_waiting 1: %v", err)
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose request ended: %v", err)
	}
	if n := p.lineLen(); n != 0 {
		t.Errorf("%d left in line", n)
	}
	held[0]()
	held[0]() // a second release gives back nothing more
	takeAll(t, p, kindAnswer, 1)
	if _, err := p.acquire(context.Background(), kindTool); err == nil {
		t.Error("a release counted twice: two slots taken of one")
	}
}

func TestSlotOptionsChecked(t *testing.T) {
	t.Parallel()
	for _, opts := range []SlotOptions{{ForTools: -1}, {Wait: -time.Second}, {MaxWaiting: -1}} {
		if _, err := newSlotPool(4, opts, newHeapReturn()); err == nil {
			t.Errorf("%+v of 4 slots accepted", opts)
		}
	}
}

// TestReservationsFitFewSlots: the default reservations (one slot each) on
// a server that runs one or two things at once leave both kinds a slot.
func TestReservationsFitFewSlots(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		total      int
		opts, want SlotOptions
	}{
		{1, SlotOptions{ForAnswers: 1, ForTools: 1}, SlotOptions{}},
		{2, SlotOptions{ForAnswers: 1, ForTools: 1}, SlotOptions{ForAnswers: 1, ForTools: 1}},
		{3, SlotOptions{ForAnswers: 2, ForTools: 3}, SlotOptions{ForAnswers: 1, ForTools: 2}},
		{4, SlotOptions{ForAnswers: 4}, SlotOptions{ForAnswers: 3}},
		{4, SlotOptions{ForAnswers: 1, ForTools: 1}, SlotOptions{ForAnswers: 1, ForTools: 1}},
	} {
		p, err := newSlotPool(c.total, c.opts, newHeapReturn())
		if err != nil {
			t.Fatal(err)
		}
		if p.opts != c.want {
			t.Errorf("%+v of %d slots: kept %+v, want %+v", c.opts, c.total, p.opts, c.want)
		}
		for _, kind := range []slotKind{kindAnswer, kindTool} {
			release, err := p.acquire(context.Background(), kind)
			if err != nil {
				t.Errorf("%+v of %d slots: kind %d gets no slot: %v", c.opts, c.total, kind, err)
				continue
			}
			release()
		}
	}
}

func (p *slotPool) lineLen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.line)
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// meteredAnswerer is the real pipeline whose searches take a while, as a
// 16 KB query's embedding does, counting the searches and answers running.
type meteredAnswerer struct {
	Answerer
	searchTakes time.Duration
	slots       *slotPool

	mu                       sync.Mutex
	searches, answers        int
	mostSearches, mostAtOnce int
	answersBesideFull        int // answers that started while tool calls held their whole share of slots
}

func (m *meteredAnswerer) Retrieve(ctx context.Context, q rag.Question) (*rag.Retrieval, error) {
	m.enter(&m.searches)
	defer m.leave(&m.searches)
	time.Sleep(m.searchTakes)
	return m.Answerer.Retrieve(ctx, q)
}

func (m *meteredAnswerer) Ask(ctx context.Context, q rag.Question, onDelta func(string) error) (*rag.Answer, error) {
	m.enter(&m.answers)
	defer m.leave(&m.answers)
	return m.Answerer.Ask(ctx, q, onDelta)
}

func (m *meteredAnswerer) enter(n *int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*n++
	m.mostSearches = max(m.mostSearches, m.searches)
	m.mostAtOnce = max(m.mostAtOnce, m.searches+m.answers)
	if n == &m.answers {
		m.slots.mu.Lock()
		if m.slots.held[kindTool] == m.slots.most(kindTool) {
			m.answersBesideFull++
		}
		m.slots.mu.Unlock()
	}
}

func (m *meteredAnswerer) leave(n *int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*n--
}

// Six MCP clients loop long searches, more than their share of four slots
// can run (one kept for answers), while 23 chat completions are asked one
// after another: every completion is answered, while the searches hold
// their whole share and never more, and no search is refused: each waits
// its turn. With nothing kept for answers and no waiting (the settings
// before issue 33) most completions got 429.
func TestAgentsSaturatingTheirShareLeaveChatSlots(t *testing.T) {
	t.Parallel()
	store := smallvault.Open(t)
	up := upstream(t)
	up.FirstToken, up.PerToken = 20*time.Millisecond, 5*time.Millisecond
	m := &meteredAnswerer{Answerer: testPipeline(t, store, up), searchTakes: 40 * time.Millisecond}
	hs, srv := testServer(t, store, up, Options{Answerer: m, MaxConcurrent: 4,
		Slots: SlotOptions{ForAnswers: 1, ForTools: 1, Wait: 5 * time.Second, MaxWaiting: 16}})
	m.slots = srv.slots

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	searched, refusedSearches := 0, 0
	query := strings.Repeat("knead dough sourdough rise ", rag.DefaultQuestionBytes/30)
	for range 6 {
		session := initialize(t, hs.URL).Header.Get("Mcp-Session-Id")
		wg.Go(func() {
			for range 200 {
				select {
				case <-stop:
					return
				default:
				}
				got, err := searchOnce(hs.URL, session, query)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				searched++
				if strings.Contains(got, `"isError":true`) {
					refusedSearches++
				}
				mu.Unlock()
			}
		})
	}
	waitFor(t, func() bool { m.mu.Lock(); defer m.mu.Unlock(); return m.searches == 3 })
	const chats = 23
	var refused []string
	for i := range chats {
		resp := do(t, http.MethodPost, hs.URL+"/v1/chat/completions", chatBody(fmt.Sprintf("How long do I knead sourdough dough, time %d?", i), nil))
		var body apiErr
		decode(t, resp, &body)
		if resp.StatusCode != http.StatusOK {
			refused = append(refused, fmt.Sprintf("%d %s", resp.StatusCode, body.Error.Message))
		}
	}
	close(stop)
	wg.Wait()

	m.mu.Lock()
	defer m.mu.Unlock()
	t.Logf("%d searches (%d refused), %d chat completions (%d refused), %d of them answered while tool calls held their whole share; at most %d searches and %d requests at once",
		searched, refusedSearches, chats, len(refused), m.answersBesideFull, m.mostSearches, m.mostAtOnce)
	if len(refused) > 0 {
		t.Errorf("%d of %d chat completions refused while MCP clients searched: %v", len(refused), chats, refused[0])
	}
	if refusedSearches > 0 {
		t.Errorf("%d of %d searches refused: they should have waited their turn", refusedSearches, searched)
	}
	if m.mostSearches != 3 || m.mostAtOnce > 4 {
		t.Errorf("at most %d searches and %d requests at once, want 3 (four slots less one kept for answers) and at most 4", m.mostSearches, m.mostAtOnce)
	}
	if m.answersBesideFull < chats/2 {
		t.Errorf("only %d of %d answers ran while tool calls held their share: the load did not saturate it", m.answersBesideFull, chats)
	}
}

// searchOnce calls vault_search in a session and returns the response
// body; it fails by error, for goroutines.
func searchOnce(url, session, query string) (string, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call",
		"params": map[string]any{"name": "vault_search", "arguments": map[string]any{"query": query}}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequest(http.MethodPost, url+"/mcp", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("vault_search: %d %s", resp.StatusCode, got)
	}
	return string(got), err
}
