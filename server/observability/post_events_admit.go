package observability

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	guard "github.com/guardrail-control/guard"
	"github.com/guardrail-control/guard/server/problem"
)

// CodeBufferFull is the error code of the 503 answered when posted events do not fit in the buffer.
const CodeBufferFull = "OBSERVABILITY_BUFFER_FULL"

// admit hands validated events to the recorder and answers: 202 once buffered, or in durable mode 201
// once committed; 503 with Retry-After when they do not fit in the buffer (nothing of the request was
// taken) or, in durable mode, when the database did not commit them; 413 when they would not fit even
// in an empty buffer.
func (a *API) admit(w http.ResponseWriter, r *http.Request, events []guard.Event) {
	if !a.Durable {
		if err := a.Recorder.Offer(events); err != nil {
			a.refuse(w, r, err)
			return
		}
		problem.Respond(w, r, a.logger(), http.StatusAccepted, PostEventsResponse{Received: len(events), Enqueued: len(events),
			Status: ingestStatus(len(events), 0)})
		return
	}
	if err := a.Recorder.WriteThrough(r.Context(), events); err != nil {
		a.refuse(w, r, err)
		return
	}
	problem.Respond(w, r, a.logger(), http.StatusCreated, PostEventsResponse{Received: len(events), Stored: len(events),
		Status: ingestStatus(len(events), 0)})
}

// refuse answers a request whose events were not taken.
func (a *API) refuse(w http.ResponseWriter, r *http.Request, err error) {
	var full *FullError
	if errors.As(err, &full) && full.TooLarge {
		// Retry-After would be a lie: this request never fits. Not logged per request, like the 503.
		problem.Write(w, r, nil, &problem.Error{Status: http.StatusRequestEntityTooLarge, Code: problem.CodePayloadTooLarge,
			Detail: "the events of this request need more memory than the whole observability buffer holds " +
				"(OBSERVABILITY_BUFFER_BYTES): none of them were taken; send them in smaller requests"})
		return
	}
	if full != nil {
		detail := "the observability buffer is full (the database is slow or unavailable): none of this request's events " +
			"were taken; send them again after Retry-After"
		if full.Closed {
			detail = "the server is shutting down: none of this request's events were taken; send them again later"
		}
		// Not logged per request: the recorder logs refusals at most every 10 s and counts them.
		problem.Write(w, r, nil, &problem.Error{Status: http.StatusServiceUnavailable, Code: CodeBufferFull,
			Detail: detail, Header: retryAfter(full.RetryAfter)})
		return
	}
	if pe := problem.From(err); pe.Status < 500 {
		problem.Write(w, r, a.logger(), err)
		return
	}
	a.logger().Error("observability events could not be stored (durable mode)", zap.String("path", r.URL.Path),
		zap.String("request_id", w.Header().Get(problem.RequestIDHeader)), zap.Error(err))
	problem.Write(w, r, nil, &problem.Error{Status: http.StatusServiceUnavailable, Code: problem.CodeDatabaseUnavailable,
		Detail: "the events could not be stored: none of them was; send them again", Header: retryAfter(time.Second)})
}

// retryAfter is the Retry-After header of d, in whole seconds, at least 1.
func retryAfter(d time.Duration) http.Header {
	secs := max(int((d+time.Second-1)/time.Second), 1)
	return http.Header{"Retry-After": []string{strconv.Itoa(secs)}}
}
