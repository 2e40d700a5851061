package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/switchboard-mcp/switchboard/internal/config"
	"github.com/switchboard-mcp/switchboard/internal/llm/llmtest"
	"github.com/switchboard-mcp/switchboard/internal/testserver"
	"github.com/switchboard-mcp/switchboard/internal/web"
)

// TestBrowserAsks answers, in Chromium, what servers ask during calls
// started from the console: server-everything's elicitation form
// (accepted with values the tool echoes, declined, cancelled), a go-sdk
// server's URL-mode elicitation, server-everything's sampling request
// sent to an llm: model (a scripted OpenAI-compatible endpoint on
// 127.0.0.1) after two approvals, and a call cancelled while its question
// waits. Each pane gets the focus and passes the accessibility audit.
func TestBrowserAsks(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t, func(req llmtest.Request) llmtest.Response {
		return llmtest.Response{Text: "Wires hum through the night\nevery call finds its answer\nthe board stays awake"}
	})
	cfg := testConfig(sharedEverything(t, "everything"), testserver.Server(t, "asks", "asks"))
	cfg.LLM = config.DefaultLLM()
	cfg.LLM.BaseURL, cfg.LLM.Model, cfg.LLM.Stream = model.URL(), "haiku-1", false
	r := startDaemon(t, cfg)
	for _, name := range []string{"everything", "asks"} {
		if _, err := r.d.Pool().WaitConnected(context.Background(), name, 60*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	ctx := browser(t, 1280, 1000)

	// call opens a tool's page and starts it with the form as filled by
	// fill (a JavaScript statement, may be empty), then waits for a
	// question of kind.
	call := func(t *testing.T, server, tool, fill, kind string) {
		t.Helper()
		do(t, ctx, "opening "+tool, chromedp.Navigate(r.url+web.Prefix+"tool?server="+server+"&name="+tool))
		waitJS(t, ctx, "the form", `document.getElementById("call-button") && window.sb && window.sb.schemaForm`)
		if fill != "" {
			eval[chromedp.Void](t, ctx, fill+"; 1")
		}
		do(t, ctx, "calling "+tool, click(chromedp.ID("call-button")))
		waitJS(t, ctx, "the question", `document.querySelector('#asks .ask[data-kind="`+kind+`"]')`)
		if !eval[bool](t, ctx, `document.querySelector("#asks .ask").contains(document.activeElement)`) {
			t.Errorf("the focus is on %s, not in the question's pane", eval[string](t, ctx, `document.activeElement.outerHTML.slice(0, 80)`))
		}
	}
	result := func(t *testing.T) string {
		t.Helper()
		waitJS(t, ctx, "the result", resultPage(""))
		if n := eval[int](t, ctx, `document.querySelectorAll("#asks .ask").length`); n != 0 {
			t.Errorf("%d question panes left after the call ended", n)
		}
		return eval[string](t, ctx, `document.getElementById("result").innerText`)
	}
	field := func(path string) string {
		return `document.querySelector('#asks .field[data-path="` + path + `"] input, #asks .field[data-path="` + path + `"] select')`
	}

	t.Run("a form is filled and accepted", func(t *testing.T) {
		call(t, "everything", "trigger-elicitation-request", "", "form")
		if got := eval[string](t, ctx, `document.querySelector("#asks .ask-message").textContent`); got != "Please provide inputs for the following fields:" {
			t.Errorf("the server's message: got %q", got)
		}
		// Defaults are filled in; enums are choices; required is marked.
		if got := eval[string](t, ctx, field("firstLine")+`.value`); got != "It was a dark and stormy night." {
			t.Errorf("firstLine's default: got %q", got)
		}
		if got := eval[string](t, ctx, field("integer")+`.value`); got != "42" {
			t.Errorf("integer's default: got %q, want 42", got)
		}
		if got := eval[string](t, ctx, `(function(){ const s = `+field("titledSingleSelectEnum")+`; return s.tagName + ":" + s.options[s.selectedIndex].text })()`); got != "SELECT:Superman (hero-1)" {
			t.Errorf("a titled enum: got %q, want a choice showing Superman, chosen by default", got)
		}
		if got := eval[string](t, ctx, `(function(){ const s = `+field("legacyTitledEnum")+`; return s.options[s.selectedIndex].text })()`); got != "Cats (pet-1)" {
			t.Errorf("a legacy titled enum: got %q, want Cats (pet-1)", got)
		}
		if got := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#asks fieldset[data-path="untitledMultipleSelectEnum"] input:checked')).map(b => b.parentNode.textContent.trim())`); len(got) != 1 || got[0] != "Guitar" {
			t.Errorf("a multiple choice's default: got %v, want Guitar ticked", got)
		}
		if !eval[bool](t, ctx, field("name")+`.getAttribute("aria-required") === "true"`) {
			t.Error("name is not marked required")
		}
		// The fields in the order the server wrote them, as its other
		// clients show them (not required first, nor by name).
		order := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#asks .ask-form [data-path]')).map(e => e.dataset.path).filter((p, i, a) => p !== '' && !p.includes('.') && a.indexOf(p) === i)`)
		wantOrder := []string{"name", "check", "firstLine", "email", "homepage", "birthdate", "integer", "number", "untitledSingleSelectEnum", "untitledMultipleSelectEnum", "titledSingleSelectEnum", "titledMultipleSelectEnum", "legacyTitledEnum"}
		if strings.Join(order, " ") != strings.Join(wantOrder, " ") {
			t.Errorf("the form's fields: got %v, want the server's order %v", order, wantOrder)
		}
		audit(t, ctx, "the elicitation pane")
		// Checked in the page before it is sent: name is required.
		do(t, ctx, "accepting without a name", click(chromedp.CSS(`#asks .ask button.primary`)))
		waitJS(t, ctx, "the missing-name error", `document.querySelector('#asks .field[data-path="name"] .field-error').textContent.includes("required")`)
		do(t, ctx, "filling the form",
			chromedp.SendKeys(chromedp.CSS(`#asks .field[data-path="name"] input`), "Ada Lovelace"),
			chromedp.SendKeys(chromedp.CSS(`#asks .field[data-path="email"] input`), "ada@example.com"),
			chromedp.SetValue(chromedp.CSS(`#asks .field[data-path="integer"] input`), "7"))
		eval[chromedp.Void](t, ctx, `document.querySelector('#asks .field[data-path="check"] select').value = "true"; 1`)
		if eval[bool](t, ctx, `!document.querySelector('#asks .field[data-path="name"] .field-error').hidden || !document.querySelector('#asks .ask-form .fault').hidden`) {
			t.Error("name's error is still shown after it was filled in")
		}
		shot(t, ctx, "elicitation")
		do(t, ctx, "accepting", click(chromedp.CSS(`#asks .ask button.primary`)))
		text := result(t)
		for _, want := range []string{"User provided the requested information", "Name: Ada Lovelace", "Email: ada@example.com", "Favorite Integer: 7", "Agreed to terms: true"} {
			if !strings.Contains(text, want) {
				t.Errorf("the tool's result does not echo %q:\n%s", want, text)
			}
		}
	})

	for _, c := range []struct{ name, button, want string }{{"declined", "Decline", "User declined"}, {"cancelled", "Cancel", "User cancelled"}} {
		t.Run("a form is "+c.name, func(t *testing.T) {
			call(t, "everything", "trigger-elicitation-request", "", "form")
			eval[chromedp.Void](t, ctx, `Array.from(document.querySelectorAll("#asks .ask button")).find(b => b.textContent === `+jsString(c.button)+`).click(); 1`)
			if text := result(t); !strings.Contains(text, c.want) {
				t.Errorf("after %s the result says:\n%s\nwant %q", c.button, text, c.want)
			}
		})
	}

	t.Run("a form's required fields stay where the server wrote them", func(t *testing.T) {
		// The go-sdk writes the asks server's schema by name: login,
		// notify, ratio, seats, ...; login and seats are required.
		call(t, "asks", "ask", "", "form")
		order := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#asks .ask-form [data-path]')).map(e => e.dataset.path).filter((p, i, a) => p !== '' && !p.includes('.') && a.indexOf(p) === i)`)
		if want := "login notify ratio seats start tags team"; strings.Join(order, " ") != want {
			t.Errorf("the form's fields: got %v, want the server's order %s", order, want)
		}
		if !eval[bool](t, ctx, field("seats")+`.getAttribute("aria-required") === "true"`) {
			t.Error("seats is not marked required")
		}
		eval[chromedp.Void](t, ctx, `Array.from(document.querySelectorAll("#asks .ask button")).find(b => b.textContent === "Cancel").click(); 1`)
		if text := result(t); !strings.Contains(text, "cancel") {
			t.Errorf("after Cancel the result says:\n%s", text)
		}
	})

	t.Run("a URL is shown, opened only by its link, and accepted", func(t *testing.T) {
		call(t, "asks", "open", "", "url")
		eval[chromedp.Void](t, ctx, `window.__page = "same"; 1`)
		if got := eval[string](t, ctx, `document.querySelector("#asks .host").textContent`); got != "example.com" {
			t.Errorf("the URL's host: got %q, want example.com", got)
		}
		link := eval[map[string]string](t, ctx, `(function(){ const a = document.querySelector("#asks .ask a"); return {href: a.href, target: a.target, rel: a.rel} })()`)
		if link["href"] != "https://example.com/connect?x=1" || link["target"] != "_blank" || link["rel"] != "noopener noreferrer" {
			t.Errorf("the Open link: got %v, want the URL in a new tab with rel noopener noreferrer", link)
		}
		audit(t, ctx, "the URL pane")
		shot(t, ctx, "elicitation-url")
		if eval[string](t, ctx, `window.__page`) != "same" || !strings.Contains(eval[string](t, ctx, `location.href`), "/ui/tool") {
			t.Error("the page navigated by itself")
		}
		// Keyboard only: from the pane's heading (where the question put
		// the focus; the audit moved it), past the Open link, to Accept.
		eval[chromedp.Void](t, ctx, `document.querySelector("#asks .ask h2").focus(); 1`)
		do(t, ctx, "tabbing to Accept", chromedp.KeyEvent("\t"), chromedp.KeyEvent("\t"))
		if got := eval[string](t, ctx, `document.activeElement.textContent`); !strings.HasPrefix(got, "Accept") {
			t.Fatalf("two tabs from the heading reach %q, want Accept", got)
		}
		do(t, ctx, "accepting with Enter", chromedp.KeyEvent("\r"))
		if text := result(t); !strings.Contains(text, `"action": "accept"`) {
			t.Errorf("the server got: %s, want an accept", text)
		}
	})

	t.Run("sampling is approved, sent to the model, and its answer approved", func(t *testing.T) {
		call(t, "everything", "trigger-sampling-request", `document.querySelector('.field[data-path="prompt"] input').value = "a haiku about switchboards"`, "sampling")
		pane := eval[string](t, ctx, `document.querySelector("#asks .ask").innerText`)
		for _, want := range []string{"You are a helpful test server.", "Resource trigger-sampling-request context: a haiku about switchboards", "Max tokens", "100", "Send to haiku-1"} {
			if !strings.Contains(pane, want) {
				t.Errorf("the sampling pane does not show %q:\n%s", want, pane)
			}
		}
		if n := len(model.Requests()); n != 0 {
			t.Errorf("the model got %d requests before the person approved", n)
		}
		audit(t, ctx, "the sampling pane")
		shot(t, ctx, "sampling")
		do(t, ctx, "approving", click(chromedp.CSS(`#asks .ask button.primary`)))
		waitJS(t, ctx, "the model's answer", `document.querySelector('#asks .ask[data-kind="sampled"]')`)
		if got := eval[string](t, ctx, `document.querySelector('#asks .ask[data-kind="sampled"] .ask-text').textContent`); !strings.HasPrefix(got, "Wires hum through the night") {
			t.Errorf("the model's answer shown: %q", got)
		}
		if !eval[bool](t, ctx, `document.querySelector('#asks .ask[data-kind="sampled"]').contains(document.activeElement)`) {
			t.Error("the focus did not move to the model's answer")
		}
		shot(t, ctx, "sampling-answer")
		do(t, ctx, "returning it", click(chromedp.CSS(`#asks .ask[data-kind="sampled"] button.primary`)))
		text := result(t)
		if !strings.Contains(text, "Wires hum through the night") || !strings.Contains(text, "haiku-1") {
			t.Errorf("the tool's result does not hold the model's answer:\n%s", text)
		}
		reqs := model.Requests()
		if len(reqs) != 1 || len(reqs[0].Messages) != 2 || reqs[0].Messages[0].Content != "You are a helpful test server." || reqs[0].MaxTokens != 100 {
			t.Errorf("the model got %+v, want one request with the system prompt and the message, max 100 tokens", reqs)
		}
	})

	t.Run("sampling declined", func(t *testing.T) {
		call(t, "everything", "trigger-sampling-request", `document.querySelector('.field[data-path="prompt"] input').value = "no"`, "sampling")
		eval[chromedp.Void](t, ctx, `Array.from(document.querySelectorAll("#asks .ask button")).find(b => b.textContent === "Decline").click(); 1`)
		if text := result(t); !strings.Contains(text, "declined") {
			t.Errorf("the result of a declined sampling request:\n%s\nwant it to say declined", text)
		}
		if n := len(model.Requests()); n != 1 {
			t.Errorf("the model got %d requests, want still 1", n)
		}
	})

	t.Run("a call cancelled while its question waits", func(t *testing.T) {
		call(t, "asks", "confirm", "", "form")
		start := time.Now()
		do(t, ctx, "cancelling the call", click(chromedp.ID("cancel-button")))
		waitJS(t, ctx, "the cancelled result", resultPage("cancelled"))
		if n := eval[int](t, ctx, `document.querySelectorAll("#asks .ask").length`); n != 0 {
			t.Errorf("%d question panes left after the call was cancelled", n)
		}
		t.Logf("cancelled in %s", time.Since(start))
	})
}
