// Package notify sends a group's transitions (status.notifications) as CloudEvents over HTTP.
package notify

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/oaat-io/oaat-operator/api/v1alpha1"
)

// Scope says whose sink a sink is.
type Scope string

const (
	// ScopeCluster is the manager's cluster-wide sink (--notify-sink).
	ScopeCluster Scope = "cluster"
	// ScopeGroup is a group's own sink (spec.notify.sink).
	ScopeGroup Scope = "group"
)

// Sink is where a group's transitions go.
type Sink struct {
	// URL is the sink's address.
	URL string
	// Scope says whose sink it is.
	Scope Scope
	// Events are the transitions it takes, all when empty.
	Events string
}

// GroupSink is the sink of spec.notify.
func GroupSink(spec *v1alpha1.Notify) Sink {
	events := make([]string, 0, len(spec.Events))
	for _, e := range spec.Events {
		events = append(events, string(e))
	}
	slices.Sort(events)
	return Sink{URL: spec.Sink, Scope: ScopeGroup, Events: strings.Join(events, ",")}
}

// Takes reports whether the sink takes transitions of that event.
func (s Sink) Takes(event v1alpha1.NotifyEvent) bool {
	return s.Events == "" || slices.Contains(strings.Split(s.Events, ","), string(event))
}

// Describe names the sink in a message: the cluster-wide sink by its scope alone (its URL may be
// the administrator's own), a group's sink by its URL.
func (s Sink) Describe() string {
	if s.Scope == ScopeCluster {
		return "the cluster-wide sink"
	}
	return s.URL
}

// Group is the group whose transitions are sent.
type Group struct {
	UID, Namespace, Name string
}

// Sender delivers one transition of a group to a sink; nil when the sink acknowledged it.
type Sender func(ctx context.Context, sink Sink, group Group, t v1alpha1.Transition) error

// Timeout bounds one delivery.
const Timeout = 5 * time.Second

// EventType is the CloudEvent type of a transition's event: io.oaat.<event in lower case>.
func EventType(event v1alpha1.NotifyEvent) string {
	return "io.oaat." + strings.ToLower(string(event))
}

// Source is the CloudEvent source of a group's transitions: its path on the API server.
func Source(g Group) string {
	return fmt.Sprintf("/apis/%s/namespaces/%s/oaatgroups/%s", v1alpha1.GroupVersion, g.Namespace, g.Name)
}

// ID is the CloudEvent id of a transition: the group's UID and the transition's sequence number,
// the same each time it is sent, so that a receiver can drop a second copy.
func ID(g Group, t v1alpha1.Transition) string {
	return fmt.Sprintf("%s/%d", g.UID, t.Seq)
}

// Data is a transition's CloudEvent data.
type Data struct {
	Namespace string `json:"namespace"`
	Group     string `json:"group"`
	Item      string `json:"item,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// Event is the CloudEvent of a group's transition.
func Event(g Group, t v1alpha1.Transition) (cloudevents.Event, error) {
	e := cloudevents.NewEvent()
	e.SetID(ID(g, t))
	e.SetSource(Source(g))
	e.SetType(EventType(t.Event))
	e.SetTime(t.Time.Time)
	if t.Item != "" {
		e.SetSubject(t.Item)
	}
	err := e.SetData(cloudevents.ApplicationJSON, Data{Namespace: g.Namespace, Group: g.Name, Item: t.Item, Reason: t.Reason, Message: t.Message})
	return e, err
}

// HTTPSender sends in CloudEvents' structured mode over HTTP; token, when not nil, gives the
// bearer token of the cluster-wide sink.
func HTTPSender(token func(context.Context) (string, error)) Sender {
	return func(ctx context.Context, sink Sink, g Group, t v1alpha1.Transition) error {
		e, err := Event(g, t)
		if err != nil {
			return err
		}
		opts := []cehttp.Option{cehttp.WithTarget(sink.URL), cehttp.WithClient(http.Client{Timeout: Timeout})}
		if sink.Scope == ScopeCluster && token != nil {
			tok, err := token(ctx)
			if err != nil {
				return fmt.Errorf("reading the sink's token: %w", err)
			}
			if tok != "" {
				opts = append(opts, cehttp.WithHeader("Authorization", "Bearer "+tok))
			}
		}
		c, err := cloudevents.NewClientHTTP(opts...)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(cloudevents.WithEncodingStructured(ctx), Timeout)
		defer cancel()
		if res := c.Send(ctx, e); !cloudevents.IsACK(res) {
			return fmt.Errorf("sending %s: %w", e.ID(), res)
		}
		return nil
	}
}
