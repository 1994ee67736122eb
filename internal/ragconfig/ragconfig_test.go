package ragconfig

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultask/vaultask/config"
	"github.com/vaultask/vaultask/vault"
)

// The full-text field weights and the vector distance limit reach the
// pipeline from config (ask, serve and eval alike): their defaults are the
// index's, and a changed one arrives.
func TestSettingsMapTheFieldWeights(t *testing.T) {
	got := Settings(config.Default())
	if got.FTSFields != vault.DefaultFieldWeights {
		t.Errorf("default bm25_* = %+v, want vault.DefaultFieldWeights %+v", got.FTSFields, vault.DefaultFieldWeights)
	}
	if got.VectorMaxDistance != 0 {
		t.Errorf("default vector_max_distance = %v, want 0 (no limit)", got.VectorMaxDistance)
	}
	cfg := config.Default()
	if err := cfg.Set("retrieval.bm25_links", "2"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Set("retrieval.vector_max_distance", "0.6"); err != nil {
		t.Fatal(err)
	}
	if got := Settings(cfg); got.FTSFields.Links != 2 || got.VectorMaxDistance != 0.6 {
		t.Errorf("changed bm25_links and vector_max_distance: %+v, %v", got.FTSFields, got.VectorMaxDistance)
	}
}

// Every retrieval key reaches the pipeline: changing any one of them changes
// the settings (a key added to config but not mapped here would change
// nothing, and an A/B arm on it would measure the defaults twice).
func TestEveryRetrievalKeyIsMapped(t *testing.T) {
	base := Settings(config.Default())
	other := map[string]string{"fusion": "note", "vector_query": "keywords"}
	typ := reflect.TypeOf(config.Retrieval{})
	def := reflect.ValueOf(config.Default().Retrieval)
	for i := range typ.NumField() {
		key := strings.Split(typ.Field(i).Tag.Get("yaml"), ",")[0]
		var value string
		switch v := def.Field(i); v.Kind() {
		case reflect.Bool:
			value = strconv.FormatBool(!v.Bool())
		case reflect.Int:
			value = strconv.Itoa(int(v.Int()) + 1)
		case reflect.Float64:
			delta := 0.25
			if v.Float() >= 1 { // a share at its maximum
				delta = -delta
			}
			value = strconv.FormatFloat(v.Float()+delta, 'f', -1, 64)
		case reflect.String:
			value = other[key]
		}
		cfg := config.Default()
		if err := cfg.Set("retrieval."+key, value); err != nil {
			t.Fatalf("retrieval.%s=%s: %v", key, value, err)
		}
		if reflect.DeepEqual(Settings(cfg), base) {
			t.Errorf("retrieval.%s=%s changes nothing in rag.Settings: not mapped", key, value)
		}
	}
}
