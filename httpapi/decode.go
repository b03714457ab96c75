package httpapi

import (
	"errors"
	"net/http"

	"github.com/settleflow/settleflow"
	"github.com/settleflow/settleflow/internal/strictjson"
	"github.com/settleflow/settleflow/wire"
)

// decodeBody decodes a request body, which must be one JSON object, into v
// by internal/strictjson's rules: the same ones the engine applies to a
// product payload, so no name given twice, in another case, or unknown, no
// invalid UTF-8, nothing after the object and nesting at most
// strictjson.MaxDepth deep. Each refusal is a 400 naming the parameter at
// fault (for example "customerId" or "payload.attachments"):
//
//   - body_missing: the body is empty;
//   - body_invalid: not one well-formed JSON object (syntax or data after
//     the object, with no param; invalid UTF-8 or nesting too deep, naming
//     the member where it is);
//   - parameter_invalid: a name given twice, or a value of the wrong type;
//   - parameter_unknown: a name that is not a parameter, including a case
//     variant of one ("CUSTOMERID").
func decodeBody(body []byte, v any) *Error {
	err := strictjson.UnmarshalObject(body, v)
	if err == nil {
		return nil
	}
	var e *strictjson.Error
	if !errors.As(err, &e) {
		return invalid(wire.CodeBodyInvalid, "", "The request body is not valid JSON.")
	}
	param := e.Param("")
	switch e.Kind {
	case strictjson.Empty:
		return invalid(wire.CodeBodyMissing, "", "The request body is empty; send a JSON object.")
	case strictjson.NotObject:
		return invalid(wire.CodeBodyInvalid, "", "The request body must be a JSON object.")
	case strictjson.DuplicateName, strictjson.Type:
		return invalid(settleflow.CodeParameterInvalid, param, e.Message(param))
	case strictjson.UnknownName:
		return invalid(settleflow.CodeParameterUnknown, param, e.Message(param))
	case strictjson.InvalidUTF8, strictjson.TooDeep:
		if param == "" {
			return invalid(wire.CodeBodyInvalid, "", e.Message("The request body"))
		}
		return invalid(wire.CodeBodyInvalid, param, e.Message(param))
	default: // Syntax, TrailingData: the body as a whole is at fault.
		return invalid(wire.CodeBodyInvalid, "", e.Message("The request body"))
	}
}

// readBody reads a POST's JSON body strictly into v, refusing a query
// string; on failure it writes the error and returns false.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request, v any) bool {
	if refuseQuery(w, r) {
		return false
	}
	body, apiErr := h.readJSON(w, r)
	if apiErr == nil {
		apiErr = decodeBody(body, v)
	}
	if apiErr != nil {
		writeError(w, r, apiErr)
		return false
	}
	return true
}
