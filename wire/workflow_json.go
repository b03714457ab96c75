package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends the wire form of w to b: byte for byte what
// encoding/json writes for a Workflow (fields in declaration order, HTML
// characters escaped, raw JSON compacted), without reflection. Every API
// answer carrying a workflow goes through it.
func (w *Workflow) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendJSONString(b, w.ID)
	b = append(b, `,"object":`...)
	b = appendJSONString(b, w.Object)
	b = append(b, `,"livemode":`...)
	b = strconv.AppendBool(b, w.Livemode)
	b = append(b, `,"product":`...)
	b = appendJSONString(b, w.Product)
	b = append(b, `,"customerId":`...)
	b = appendJSONString(b, w.CustomerID)
	b = append(b, `,"payload":`...)
	b = appendRawJSON(b, w.Payload)
	b = append(b, `,"quoted":{"amount":`...)
	b = strconv.AppendInt(b, w.Quoted.Amount, 10)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, w.Quoted.Currency)
	b = append(b, `},"pricing":`...)
	b = w.Pricing.appendJSON(b)
	b = append(b, `,"successCriteria":`...)
	b = appendRawJSON(b, w.SuccessCriteria)
	b = append(b, `,"marginFloor":`...)
	if w.MarginFloor == nil {
		b = append(b, "null"...)
	} else {
		b = w.MarginFloor.appendJSON(b)
	}
	b = append(b, `,"margin":{"target":`...)
	b = w.Margin.Target.appendJSON(b)
	b = append(b, `,"achieved":`...)
	if w.Margin.Achieved == nil {
		b = append(b, "null"...)
	} else {
		b = w.Margin.Achieved.appendJSON(b)
	}
	b = append(b, `},"status":`...)
	b = appendJSONString(b, string(w.Status))
	b = append(b, `,"result":`...)
	b = appendRawJSON(b, w.Result)
	b = append(b, `,"settlement":`...)
	if s := w.Settlement; s == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"chainId":`...)
		b = strconv.AppendInt(b, s.ChainID, 10)
		b = append(b, `,"network":`...)
		b = appendJSONString(b, s.Network)
		b = append(b, `,"txHash":`...)
		b = appendJSONString(b, s.TxHash)
		b = append(b, `,"blockNumber":`...)
		b = strconv.AppendUint(b, s.BlockNumber, 10)
		b = append(b, `,"confirmations":`...)
		b = strconv.AppendUint(b, s.Confirmations, 10)
		if s.GasUsed != 0 {
			b = append(b, `,"gasUsed":`...)
			b = strconv.AppendUint(b, s.GasUsed, 10)
		}
		if s.Fee != "" {
			b = append(b, `,"fee":`...)
			b = appendJSONString(b, s.Fee)
		}
		b = append(b, '}')
	}
	b = append(b, `,"failure":`...)
	if f := w.Failure; f == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"code":`...)
		b = appendJSONString(b, string(f.Code))
		b = append(b, `,"message":`...)
		b = appendJSONString(b, f.Message)
		b = append(b, '}')
	}
	b = append(b, `,"charged":`...)
	if c := w.Charged; c == nil {
		b = append(b, "null"...)
	} else {
		b = appendMoney(b, *c)
	}
	b = append(b, `,"cost":`...)
	if c := w.Cost; c == nil {
		b = append(b, "null"...)
	} else {
		b = c.appendJSON(b)
	}
	b = append(b, `,"outcome":`...)
	if o := w.Outcome; o == nil {
		b = append(b, "null"...)
	} else {
		b = o.appendJSON(b)
	}
	b = append(b, `,"refunded":{"amount":`...)
	b = strconv.AppendInt(b, w.Refunded.Amount, 10)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, w.Refunded.Currency)
	b = append(b, `},"createdAt":`...)
	b = appendJSONTime(b, w.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = appendJSONTime(b, w.UpdatedAt)
	return append(b, '}')
}

// MarshalJSON implements json.Marshaler with AppendJSON.
func (w *Workflow) MarshalJSON() ([]byte, error) {
	if err := w.checkJSON(); err != nil {
		return nil, err
	}
	return w.AppendJSON(make([]byte, 0, 512)), nil
}

// checkJSON reports what encoding/json would refuse to encode: raw JSON that
// is not valid, a time outside years 0–9999.
func (w *Workflow) checkJSON() error {
	for _, raw := range []json.RawMessage{w.Payload, w.Result, w.SuccessCriteria} {
		if raw != nil && !json.Valid(raw) {
			return errInvalidRawJSON
		}
	}
	for _, t := range []time.Time{w.CreatedAt, w.UpdatedAt} {
		if y := t.Year(); y < 0 || y > 9999 {
			_, err := t.MarshalJSON()
			return err
		}
	}
	return nil
}

var errInvalidRawJSON = errors.New("settleflow: workflow holds invalid raw JSON")

// appendMoney writes m as encoding/json does.
func appendMoney(b []byte, m Money) []byte {
	b = append(b, `{"amount":`...)
	b = strconv.AppendInt(b, m.Amount, 10)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, m.Currency)
	return append(b, '}')
}

// appendJSON writes p as encoding/json does.
func (p *Pricing) appendJSON(b []byte) []byte {
	b = append(b, `{"model":`...)
	b = appendJSONString(b, string(p.Model))
	if p.Markup != nil {
		b = append(b, `,"markup":`...)
		b = p.Markup.appendJSON(b)
	}
	if p.MinimumCharge != nil {
		b = append(b, `,"minimumCharge":`...)
		b = appendMoney(b, *p.MinimumCharge)
	}
	if p.BaseShare != nil {
		b = append(b, `,"baseShare":`...)
		b = p.BaseShare.appendJSON(b)
	}
	return append(b, '}')
}

// appendJSON writes c as encoding/json does.
func (c *Cost) appendJSON(b []byte) []byte {
	b = append(b, `{"amount":`...)
	b = strconv.AppendInt(b, c.Amount, 10)
	b = append(b, `,"currency":`...)
	b = appendJSONString(b, c.Currency)
	b = append(b, `,"items":`...)
	if c.Items == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, it := range c.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"category":`...)
			b = appendJSONString(b, string(it.Category))
			b = append(b, `,"provider":`...)
			b = appendJSONString(b, it.Provider)
			b = append(b, `,"units":`...)
			b = strconv.AppendInt(b, it.Units, 10)
			b = append(b, `,"amount":`...)
			b = strconv.AppendInt(b, it.Amount, 10)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJSON writes o as encoding/json does.
func (o *Outcome) appendJSON(b []byte) []byte {
	b = append(b, `{"success":`...)
	b = strconv.AppendBool(b, o.Success)
	b = append(b, `,"trace":`...)
	if o.Trace == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, s := range o.Trace {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"node":`...)
			b = appendJSONString(b, s.Node)
			b = append(b, `,"path":`...)
			b = appendJSONString(b, s.Path)
			b = append(b, `,"type":`...)
			b = appendJSONString(b, s.Type)
			b = append(b, `,"matched":`...)
			b = strconv.AppendBool(b, s.Matched)
			b = append(b, `,"reason":`...)
			b = appendJSONString(b, s.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJSON writes b as encoding/json does through MarshalJSON.
func (b BasisPoints) appendJSON(dst []byte) []byte {
	return strconv.AppendFloat(dst, b.Float(), 'f', -1, 64)
}

// appendJSONTime writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, quoted).
func appendJSONTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendRawJSON writes raw as encoding/json writes a json.RawMessage: null
// when empty, otherwise compacted with <, >, &, U+2028 and U+2029 escaped.
// Raw JSON the engine stored is already compact, so the common case is a
// copy after one scan.
func appendRawJSON(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	if !needsCompaction(raw) {
		return append(b, raw...)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		// Unreachable for what the store holds; MarshalJSON checks first.
		return append(b, "null"...)
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, compact.Bytes())
	return append(b, escaped.Bytes()...)
}

// needsCompaction reports whether raw holds a byte encoding/json would
// rewrite: whitespace (between tokens or, harmlessly, in a string), an HTML
// character, or the first byte of U+2028/U+2029.
func needsCompaction(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return true
		}
	}
	return false
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as encoding/json does with HTML escaping on.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
