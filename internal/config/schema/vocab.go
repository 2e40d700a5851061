package schema

import (
	"fmt"
	"strings"
	"time"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

// This file is the schema's own vocabulary: bounds on durations and sizes,
// which JSON Schema cannot say of strings such as "30s" or "1MiB". Editors
// ignore the keywords; the validator applies them.

// vocabURL names the vocabulary.
const vocabURL = "https://switchboard.dev/schema/vocab/units"

// The vocabulary's keywords.
var (
	durationKeywords = []string{"minDuration", "maxDuration", "exclusiveMinDuration"}
	sizeKeywords     = []string{"minSize", "maxSize"}
)

// unitVocab returns the vocabulary.
func unitVocab() (*sjs.Vocabulary, error) {
	props := map[string]any{}
	for _, k := range append(append([]string{}, durationKeywords...), sizeKeywords...) {
		props[k] = map[string]any{"type": "string"}
	}
	c := sjs.NewCompiler()
	if err := c.AddResource(vocabURL, map[string]any{"properties": props}); err != nil {
		return nil, err
	}
	meta, err := c.Compile(vocabURL)
	if err != nil {
		return nil, err
	}
	return &sjs.Vocabulary{URL: vocabURL, Schema: meta, Compile: compileUnits}, nil
}

// unitBounds is the compiled form of the keywords in one schema.
type unitBounds struct {
	size                bool
	min, max            int64 // nanoseconds or bytes
	hasMin, hasMax, exc bool
}

func compileUnits(_ *sjs.CompilerContext, obj map[string]any) (sjs.SchemaExt, error) {
	var b unitBounds
	found := false
	for _, k := range durationKeywords {
		s, ok := obj[k].(string)
		if !ok {
			continue
		}
		found = true
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		switch k {
		case "maxDuration":
			b.max, b.hasMax = int64(d), true
		case "exclusiveMinDuration":
			b.min, b.hasMin, b.exc = int64(d), true, true
		default:
			b.min, b.hasMin = int64(d), true
		}
	}
	for _, k := range sizeKeywords {
		s, ok := obj[k].(string)
		if !ok {
			continue
		}
		found, b.size = true, true
		n, err := ParseSize(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		if k == "maxSize" {
			b.max, b.hasMax = n, true
		} else {
			b.min, b.hasMin = n, true
		}
	}
	if !found {
		return nil, nil
	}
	return &b, nil
}

// Validate reports a value outside the bounds. A value that is not a
// duration or size at all is left to the type and pattern keywords.
func (b *unitBounds) Validate(ctx *sjs.ValidatorContext, v any) {
	var n int64
	if b.size {
		s, err := ParseSize(v)
		if err != nil {
			return
		}
		n = s
	} else {
		if s, ok := v.(string); ok && strings.TrimSpace(s) == QueueWaitTimeout {
			return
		}
		d, err := ParseDuration(v)
		if err != nil {
			return
		}
		n = int64(d)
	}
	low := b.hasMin && (n < b.min || b.exc && n == b.min)
	if low || b.hasMax && n > b.max {
		ctx.AddError(&OutOfRange{Value: n, Size: b.size, Min: b.min, Max: b.max, HasMin: b.hasMin, HasMax: b.hasMax, Exclusive: b.exc})
	}
}

// OutOfRange is the error kind of a duration or size outside its bounds.
type OutOfRange struct {
	Value, Min, Max           int64
	Size                      bool
	HasMin, HasMax, Exclusive bool
}

// KeywordPath names the keyword.
func (k *OutOfRange) KeywordPath() []string {
	if k.Size {
		return []string{"minSize"}
	}
	return []string{"minDuration"}
}

// LocalizedString says what is wrong.
func (k *OutOfRange) LocalizedString(*message.Printer) string {
	return k.format(k.Value) + " is out of range"
}

// format renders a bound or value.
func (k *OutOfRange) format(n int64) string {
	if k.Size {
		return FormatSize(n)
	}
	return FormatDuration(time.Duration(n))
}
