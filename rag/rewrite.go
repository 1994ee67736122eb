package rag

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// rewriteSystem asks for a standalone query; kept short because it runs
// before every multi-turn retrieval.
const rewriteSystem = `You turn the last message of a conversation into one standalone search query for the user's notes.
Resolve pronouns and references ("it", "that plugin", "the second one") from the earlier turns.
Reply with the query only: one line, in the language of the last message, no quotes, no explanation.`

// standalone is the query to search: the question itself, or with history
// a standalone rewrite by the generation model (concatenated recent user
// turns without a model or when it fails).
func (p *Pipeline) standalone(ctx context.Context, q Question, tr *Trace) string {
	text := strings.TrimSpace(q.Text)
	if len(q.History) == 0 {
		return text
	}
	if p.opts.Generator == nil {
		query := concatTurns(q, p.opts.Limits.QuestionBytes)
		tr.stage("rewrite", nil, "no generation model: recent user turns concatenated: "+query)
		return query
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.ModelTimeout)
	defer cancel()
	reply, err := p.opts.Generator.Chat(ctx, ChatRequest{Messages: rewriteMessages(q)})
	query, perr := parseRewrite(reply)
	if err = errors.Join(err, perr); err != nil {
		query = concatTurns(q, p.opts.Limits.QuestionBytes)
		p.log.Warn("query rewrite failed: recent user turns concatenated", keyErr, err)
		tr.stage("rewrite", nil, fmt.Sprintf("rewrite failed (%v): recent user turns concatenated: %s", err, query))
		return query
	}
	tr.stage("rewrite", nil, "standalone query by the generation model: "+query)
	return query
}

// rewriteMessages is the rewrite prompt. When the request may use the web,
// only the user's own turns are shown: an earlier assistant answer may
// quote a personal note, and that text must not shape a query that can
// leave for the web.
func rewriteMessages(q Question) []Message {
	var b strings.Builder
	b.WriteString("Conversation:\n")
	for _, t := range recentTurns(q) {
		fmt.Fprintf(&b, "%s: %s\n", t.Role, oneLine(t.Text, 600))
	}
	fmt.Fprintf(&b, "\nLast message: %s", oneLine(q.Text, 600))
	return []Message{{Role: "system", Content: rewriteSystem}, {Role: "user", Content: b.String()}}
}

// concatTurns is the rewrite without a model: the last two earlier user
// turns and the question, joined, as many of those turns, newest first, as
// keep the text searched within max bytes.
func concatTurns(q Question, max int) string {
	query := strings.TrimSpace(q.Text)
	added := 0
	for i := len(q.History) - 1; i >= 0 && added < 2; i-- {
		t := q.History[i]
		if t.Role != "user" {
			continue
		}
		text := strings.TrimSpace(t.Text)
		if len(text)+1+len(query) > max {
			break
		}
		query = text + " " + query
		added++
	}
	return query
}

// parseRewrite takes the model's first non-empty line, unquoted, and refuses
// an empty or overlong one.
func parseRewrite(reply string) (string, error) {
	for line := range strings.SplitSeq(reply, "\n") {
		line = strings.Trim(strings.TrimSpace(line), "\"'`“”")
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > 300 {
			return "", fmt.Errorf("rewrite is %d characters long", utf8.RuneCountInString(line))
		}
		return line, nil
	}
	return "", fmt.Errorf("empty rewrite")
}
