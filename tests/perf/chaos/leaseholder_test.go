package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

func TestLeaseHolder(t *testing.T) {
	h := &leaseHolder{}
	h.acted("r0", at(0), actStatus) // no Lease write seen yet: not judged
	h.took("r0", true, at(1))
	h.took("r0", true, at(3)) // a renewal
	h.acted("r0", at(4), actStatus)
	h.acted("r1", at(4), actCreate)  // r1 acts while r0 holds it
	h.took("r1", true, at(20))       // r1 takes over
	h.acted("r0", at(20), actStatus) // reached the proxy with the take-over: not judged
	h.acted("r0", at(21), actStatus) // r0 resumes and writes
	h.acted("r0", at(21), actCreate)
	h.acted("r1", at(22), actCreate)
	h.took("r1", false, at(30)) // r1 releases
	h.acted("r1", at(31), actStatus)
	creates, examples := h.counts(actCreate)
	writes, _ := h.counts(actStatus)
	if creates != 2 || writes != 2 {
		t.Errorf("deposed creates %d, status writes %d; want 2 and 2", creates, writes)
	}
	if len(examples) != 4 {
		t.Errorf("examples %q, want 4", examples)
	}
}

func TestLeaseWrittenFollowsTheHolder(t *testing.T) {
	p := testProxy()
	const path = "/apis/coordination.k8s.io/v1/namespaces/oaat-operator-system/leases/" + leaseName
	req := httptest.NewRequest(http.MethodPut, path, http.NoBody)
	if classify(req) != leaseWrite {
		t.Fatalf("%s is not a Lease write", path)
	}
	lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("vm_1")}}
	lease.SetGroupVersionKind(coordinationv1.SchemeGroupVersion.WithKind("Lease"))
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(clientgoscheme.Scheme, clientgoscheme.Scheme).Encode(lease, &pb); err != nil {
		t.Fatal(err)
	}
	resp := answer(req, http.StatusOK, pb.String()) // what client-go asks for
	resp.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
	if err := p.modify("r0", resp); err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(resp.Body); len(body) == 0 {
		t.Error("the replica gets no body")
	}
	write := httptest.NewRequest(http.MethodPut, "/apis/oaat.io/v1alpha1/namespaces/chaos/oaatgroups/g/status", http.NoBody)
	write = write.WithContext(context.WithValue(write.Context(), sentKey{}, time.Now().Add(time.Second)))
	if err := p.modify("r1", answer(write, http.StatusOK, `{}`)); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.holder.counts(actStatus); n != 1 {
		t.Errorf("r1's status write while r0 holds the Lease counted %d times, want 1", n)
	}
	other := httptest.NewRequest(http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler", http.NoBody)
	if classify(other) != passThrough {
		t.Error("another Lease counts as the operator's")
	}
}
