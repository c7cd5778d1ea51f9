package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Duration is a length of time in the original oaat-operator's syntax: integer+unit tokens,
// summed, in any order, spaces allowed. Units: s sec secs second seconds, m min mins minute
// minutes, h hr hrs hour hours, d day days, w wk wks week weeks. Examples: 1d, 1h30m,
// "1 hour 30 min", 65m1h (2h5m). The sum must be positive.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=64
// +kubebuilder:validation:XValidation:rule="self.matches('^ *([0-9]+ *(seconds|second|secs|sec|s|minutes|minute|mins|min|m|hours|hour|hrs|hr|h|days|day|d|weeks|week|wks|wk|w) *)+$')",messageExpression=`'"' + self + '" is not a valid duration: use integer+unit tokens such as 30s, 5m, 1h30m, 1d or "1 hour 30 min"'`
// +kubebuilder:validation:XValidation:rule="self.matches('[1-9]')",messageExpression=`'"' + self + '" is zero: a duration must be positive'`
// The sum is at most 9223372036s (about 292 years, the longest Go time.Duration).
// +kubebuilder:validation:XValidation:rule="!self.matches('^ *([0-9]+ *[a-z]+ *)+$') || (self.findAll('[0-9]+').all(n, n.matches('^0*[0-9]{1,10}$')) && self.findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum() <= 9223372036)",messageExpression=`'"' + self + '" is too long: a duration is at most 9223372036s (about 292 years)'`
type Duration string

// OaatGroupSpec lists the items to run one at a time and how often.
// +kubebuilder:validation:XValidation:rule="(has(self.oaatItems) && size(self.oaatItems) > 0) || (has(self.oaatItemsFrom) && size(self.oaatItemsFrom) > 0)",message="spec.oaatItems or spec.oaatItemsFrom must give the group at least one item"
// +kubebuilder:validation:XValidation:rule="!has(self.runTimeout) || !has(self.learnedRunTimeout)",message="spec.runTimeout and spec.learnedRunTimeout cannot both be set: a run is bounded either by one timeout or by its item's learned one; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.schedule) || !has(self.frequency)",message="spec.schedule and spec.frequency cannot both be set: the items run either on a calendar (schedule) or every frequency; remove one"
// +kubebuilder:validation:XValidation:rule="!has(self.scheduleTimeZone) || has(self.schedule)",message="spec.scheduleTimeZone needs spec.schedule: it is the time zone the schedule is read in"
// +kubebuilder:validation:XValidation:rule="!has(self.jitter) || has(self.schedule)",message="spec.jitter needs spec.schedule: it delays the start of each scheduled round"
// +kubebuilder:validation:XValidation:rule="!has(self.schedule) || !has(self.mode) || self.mode != 'EachOnce'",message="mode EachOnce cannot be used with spec.schedule: a schedule already runs each item once per tick"
// +kubebuilder:validation:XValidation:rule="!has(self.backoff) || !has(self.backoff.policy) || self.backoff.policy != 'Exponential' || has(self.failureCoolOff)",message="backoff.policy Exponential needs failureCoolOff: it is the first cool-off, which doubles with each further failure"
// +kubebuilder:validation:XValidation:rule="(has(self.locks) ? size(self.locks) : 0) + (has(self.clusterLocks) ? size(self.clusterLocks) : 0) <= 4",message="spec.locks and spec.clusterLocks name at most four locks in all"
// +kubebuilder:validation:XValidation:rule="!has(self.lockOptions) || self.lockOptions.all(o, (has(self.locks) && o.lock in self.locks) || (has(self.clusterLocks) && o.lock.startsWith('ClusterOaatLock/') && o.lock.substring(16) in self.clusterLocks))",message="spec.lockOptions: each entry's lock must be a lock of spec.locks, or ClusterOaatLock/NAME for a lock of spec.clusterLocks"
// The durations are compared in seconds: CEL sums the integer+unit tokens of the Duration syntax,
// each unit known by its first letter (s, m, h, d, w), as internal/duration does.
// +kubebuilder:validation:XValidation:rule="!has(self.backoff) || !has(self.failureCoolOff) || (!has(self.backoff.maxCoolOff) && (!has(self.backoff.policy) || self.backoff.policy != 'Exponential')) || (has(self.backoff.maxCoolOff) ? self.backoff.maxCoolOff : '1d').findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum() >= self.failureCoolOff.findAll('[0-9]+ *[a-z]+').map(t, int(t.find('[0-9]+')) * (t.find('[a-z]+').startsWith('w') ? 604800 : t.find('[a-z]+').startsWith('d') ? 86400 : t.find('[a-z]+').startsWith('h') ? 3600 : t.find('[a-z]+').startsWith('m') ? 60 : 1)).sum()",messageExpression=`'backoff.maxCoolOff "' + (has(self.backoff.maxCoolOff) ? self.backoff.maxCoolOff : '1d') + '" is shorter than failureCoolOff "' + self.failureCoolOff + '": the cap of the cool-off cannot be below its first step'`
type OaatGroupSpec struct {
	// oaatType is the name of the OaatType, in the same namespace, that says what running an
	// item means.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Oaat type",xDescriptors={"urn:alm:descriptor:io.kubernetes:oaat.io:v1alpha1:OaatType"}
	// +required
	OaatType string `json:"oaatType"`

	// oaatItems is the set of items of the group; at most one of them runs at any time. An item
	// is any non-empty string of at most 253 characters (for example /srv/photos); it reaches
	// the pod as the environment variable OAAT_ITEM and through {{oaat_item}}. It may be empty
	// when oaatItemsFrom gives the items.
	// +listType=set
	// +kubebuilder:validation:MaxItems=1000
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Items",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	OaatItems []string `json:"oaatItems,omitempty"`

	// oaatItemsFrom are further sources of items, merged after oaatItems in order, duplicates
	// dropped, at most 1000 items in all. They are read again whenever a source changes. An
	// entry that cannot be an item, or a source that cannot be read, is skipped and named in
	// the ItemsValid condition.
	// +kubebuilder:validation:MaxItems=10
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Items from",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:oaatItemsFrom"}
	// +optional
	OaatItemsFrom []ItemsSource `json:"oaatItemsFrom,omitempty"`

	// frequency is how often each item should succeed: an item that succeeded less than
	// frequency ago is not started. Counted from the end of the successful run. Absent means 1h,
	// unless schedule is set; frequency and schedule cannot both be set.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Frequency",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Frequency Duration `json:"frequency,omitempty"`

	// schedule runs the items on a calendar instead of every frequency: a cron expression of
	// five fields (minute hour day-of-month month day-of-week, for example "0 1 * * *" for
	// 01:00 every night) or @yearly, @monthly, @weekly, @daily or @hourly, read in
	// scheduleTimeZone. At each tick every item is due once: the group runs its items one at a
	// time, in the usual order, until each has succeeded once since the tick; a failed item
	// retries after its failureCoolOff until then. Ticks missed while the operator was away make
	// one round; a round still going at the next tick merges into the new one (condition and
	// event RoundOverrun). A tick that a daylight-saving gap skips runs once at the end of the
	// gap; one that a fall-back repeats runs once, at its first instant. The first round is that
	// of the first tick after the group's creation. Cannot be set together with frequency or with
	// mode EachOnce.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Schedule (cron)",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Schedule CronSchedule `json:"schedule,omitempty"`

	// scheduleTimeZone is the IANA time zone (for example Europe/Berlin) that schedule is read
	// in; absent means UTC. A name that is not one of the operator's zones is refused.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Schedule time zone",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	ScheduleTimeZone TimeZone `json:"scheduleTimeZone,omitempty"`

	// jitter delays the start of each round of schedule by up to this long after its tick, so
	// that many groups scheduled at the same time do not all start in the same second. The delay
	// is drawn from the group (namespace, name, uid) and the tick, not at random: it stays the
	// same across restarts of the operator. It is kept below the time to the next tick. Needs
	// schedule.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Jitter",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Jitter Duration `json:"jitter,omitempty"`

	// failureCoolOff is how long a failed item waits before it may be started again, counted
	// from the end of the failed run. Absent means no wait.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Failure cool-off",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	FailureCoolOff Duration `json:"failureCoolOff,omitempty"`

	// backoff says how a failed item's cool-off grows with its consecutive failures; absent
	// means Fixed: every failure waits failureCoolOff.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Backoff",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:backoff"}
	// +optional
	Backoff *Backoff `json:"backoff,omitempty"`

	// blackoutWindows are times of day during which no item starts; the group waits for the
	// window's end.
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Blackout windows",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:blackoutWindows"}
	// +optional
	BlackoutWindows []BlackoutWindow `json:"blackoutWindows,omitempty"`

	// maxConsecutiveFailures parks an item once its failures since its last success
	// (status.items[].failureCount) reach this number: it does not start again until the group's
	// spec changes, the group is reset (the oaat.io/reset annotation), or an OaatRun of the item
	// runs (kubectl oaat unpark). The failures of probes while the circuit breaker is open do not
	// count, nor do interrupted runs (a blackout window, a disruption): neither says the item
	// itself fails. An item that was unparked while its count stays at or above the number parks
	// again at its next failure; a success clears the count. Absent means an item is retried
	// after each failureCoolOff however often it fails.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Most consecutive failures",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	MaxConsecutiveFailures int32 `json:"maxConsecutiveFailures,omitempty"`

	// exitCodes classify the exit codes of failed item pods: codes that count as success and
	// codes after which the item is parked rather than retried.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Exit codes",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:exitCodes"}
	// +optional
	ExitCodes *ExitCodes `json:"exitCodes,omitempty"`

	// mode is Continuous (each item runs again every frequency) or EachOnce (each item runs
	// until it succeeds once; then the group is Complete until an item is added or the group is
	// reset with the oaat.io/reset annotation).
	// +kubebuilder:default=Continuous
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Mode",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:Continuous","urn:alm:descriptor:com.tectonic.ui:select:EachOnce"}
	// +optional
	Mode GroupMode `json:"mode,omitempty"`

	// suspend stops new items from starting while true; a running item finishes. The
	// annotation pause_new_jobs: "true" has the same effect.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Suspend",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:booleanSwitch"}
	// +optional
	Suspend bool `json:"suspend,omitempty"`

	// runTimeout is the longest a run may take, counted from its start, Pending time included:
	// a run that exceeds it is stopped and counted as a failure with reason DeadlineExceeded.
	// Absent means no limit.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Run timeout",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	RunTimeout Duration `json:"runTimeout,omitempty"`

	// learnedRunTimeout bounds each run by its item's own recent durations instead of one
	// runTimeout for all: factor times the longest of the item's kept runs
	// (status.items[].recentRunSeconds, the last 5, failed ones included), within min and max; an
	// item with no kept run gets max. A run that exceeds it is stopped and counted as a failure
	// with reason DeadlineExceeded, as with runTimeout; its duration, kept at the timeout's
	// length, raises the item's next timeout to at least factor (at least 2) times it, so a
	// backup that grows is not stopped at the same length forever. Cannot be set with
	// runTimeout.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Learned run timeout",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:learnedRunTimeout"}
	// +optional
	LearnedRunTimeout *LearnedRunTimeout `json:"learnedRunTimeout,omitempty"`

	// pendingTimeout is the longest a run's pod may wait before any of its containers starts,
	// counted from the run's start: a pod that cannot be scheduled, whose volume cannot be
	// mounted (a claim that is not bound, a ReadWriteOnce volume attached to another node) or
	// whose image cannot be pulled is then stopped, and the run counted as a failure with reason
	// PendingTimeout. Once a container (an init container too) has started, only runTimeout
	// applies. Absent means no limit but runTimeout.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pending timeout",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	PendingTimeout Duration `json:"pendingTimeout,omitempty"`

	// podHistory says how many finished pods to keep per item, for succeeded and for failed
	// runs; absent keeps the latest finished pod of each item, whatever its result. The pods
	// beyond it are deleted together, in one request, when the group goes idle or once 8 of
	// them wait, so a busy group may keep a few more for a while.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Pod history",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:podHistory"}
	// +optional
	PodHistory *PodHistory `json:"podHistory,omitempty"`

	// runEvents says which finished runs get an event: All (absent: a RunSucceeded, RunFailed
	// or RunInterrupted event for each run) or Failures (no RunSucceeded event; status and the
	// metrics still record every success). A group of frequent, mostly successful runs saves one
	// API write per run with Failures: three instead of four.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Run events",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:select:All","urn:alm:descriptor:com.tectonic.ui:select:Failures"}
	// +optional
	RunEvents RunEvents `json:"runEvents,omitempty"`

	// locks are the names of OaatLocks, in the group's namespace, that each run of the group
	// takes (all of them, or it waits): at most a lock's capacity of item pods of all the groups
	// naming it are live at once. On-demand runs take them too.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +listType=set
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Locks",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	Locks []string `json:"locks,omitempty"`

	// clusterLocks are the names of ClusterOaatLocks that each run of the group takes, together
	// with spec.locks (all of them, or it waits); spec.locks and spec.clusterLocks name at most
	// four locks in all. A ClusterOaatLock whose namespaceSelector does not select the group's
	// namespace makes the group not Ready (reason LockNotPermitted). A list of its own, rather
	// than a kind in each entry of spec.locks, keeps the existing string entries of spec.locks
	// valid.
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +listType=set
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Cluster locks",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
	// +optional
	ClusterLocks []string `json:"clusterLocks,omitempty"`

	// lockOptions say how each run takes a lock of spec.locks or spec.clusterLocks: Exclusive,
	// or several slots at once; a lock without an entry is taken Shared, one slot. The lock
	// bounds what may be asked (its spec.exclusiveHolders and spec.maxSlotsPerRun).
	// +listType=map
	// +listMapKey=lock
	// +kubebuilder:validation:MaxItems=4
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Lock options",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	// +optional
	LockOptions []LockOption `json:"lockOptions,omitempty"`

	// priority orders the group's requests against those of the other groups waiting for the
	// same locks: higher first, then in the order of waiting; 0 when absent. Each lock honours it
	// up to its spec.maxPriority (absent: 0, the order of waiting alone), and the group's request
	// takes the smallest of those (status.lockWait.priority), so that every lock orders it alike. A
	// request passed over PassLimit (3) times by later requests of higher priority is promoted
	// (status.lockWait.promotedAt). It does not change the order of the group's own items.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Priority",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:number"}
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// circuitBreaker turns on, when present, the group's circuit breaker, which treats failures
	// of many items in a row as one problem of the target they share: once
	// consecutiveItemFailures distinct items fail in a row, no item's failure count or cool-off
	// grows and one item at a time runs as a probe, until one succeeds (status.circuitBreaker,
	// condition TargetAvailable). An empty circuitBreaker ({}) turns it on with its defaults.
	// Absent: off, each item backs off on its own. Removing it closes an open breaker.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Circuit breaker",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:circuitBreaker"}
	// +optional
	CircuitBreaker *CircuitBreaker `json:"circuitBreaker,omitempty"`

	// itemRenames carry the history of items that were renamed: the item named by an entry's to
	// takes the history of the item named by its from, so that renaming /srv/photo to
	// /srv/photos in oaatItems does not run it again before it is due. It applies while to is an
	// item of the group without history of its own and from is not an item of the group, in the
	// group's status or in the OaatGroupHistory a re-created group adopts; once applied it
	// changes nothing, so it may stay or be removed.
	// +kubebuilder:validation:MaxItems=100
	// +listType=map
	// +listMapKey=to
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Item renames",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:fieldGroup:itemRenames"}
	// +optional
	ItemRenames []ItemRename `json:"itemRenames,omitempty"`

	// notify sends the group's transitions (runs failed, items parked, the circuit breaker
	// opening and closing, condition AtRisk turning True) as CloudEvents to a sink of the group's
	// own, which the manager must allow (--notify-group-sink-prefixes). A manager with a
	// cluster-wide sink (--notify-sink) sends every group's transitions there too.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Notify",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	// +optional
	Notify *Notify `json:"notify,omitempty"`

	// verify runs, after an item's run succeeds, a pod of another OaatType that verifies what
	// the run made (for a backup, a restore and a comparison), in the group's next turn and
	// under its locks; its outcome is kept per item apart from the item's runs.
	// +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Verify",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:advanced"}
	// +optional
	Verify *Verify `json:"verify,omitempty"`
}

// CurrentRun is the run of an item that the operator has started and whose outcome it has not
// recorded yet. It is written before the pod is created, so that at most one run is ever intended.
type CurrentRun struct {
	// item is the item being run.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Running item",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	Item string `json:"item"`

	// podName is the name of the pod that runs the item; a live pod of the group with another
	// name is deleted.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Running pod",xDescriptors={"urn:alm:descriptor:io.kubernetes:Pod"}
	// +required
	PodName string `json:"podName"`

	// startedAt is when the operator decided to start the run.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Run started at",xDescriptors={"urn:alm:descriptor:text"}
	// +required
	StartedAt metav1.Time `json:"startedAt"`

	// stopReason is set once the operator has decided to stop the run, DeadlineExceeded (it ran
	// longer than spec.runTimeout or its learned timeout), PendingTimeout (no container of its pod started within
	// spec.pendingTimeout) or Interrupted (a blackout window with stopRunning opened),
	// after which it deletes the pod; or once it has seen the pod disrupted (Disrupted: evicted,
	// preempted, or lost with its node). The run is recorded with this reason; an Interrupted or
	// Disrupted run counts as neither success nor failure.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Stop reason",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	StopReason StopReason `json:"stopReason,omitempty"`

	// oaatRun is the name of the OaatRun this run serves; absent for a scheduled run.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="On-demand run",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	OaatRun string `json:"oaatRun,omitempty"`

	// purpose is Verify for a verification of the item's last successful run (spec.verify),
	// absent for a run of the item.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Purpose",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	Purpose RunPurpose `json:"purpose,omitempty"`
}

// ItemStatus is the history of one item of the group.
type ItemStatus struct {
	// name is the item.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Item",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +required
	Name string `json:"name"`

	// lastSuccess is when the item's last successful run ended.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last success",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastSuccess *metav1.Time `json:"lastSuccess,omitempty"`

	// lastFailure is when the item's last failed run ended.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last failure",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastFailure *metav1.Time `json:"lastFailure,omitempty"`

	// failureCount is the number of failed runs since the last successful one.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Failures since last success",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	FailureCount int32 `json:"failureCount,omitempty"`

	// lastStarted is when the item's last run was started.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last started",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastStarted *metav1.Time `json:"lastStarted,omitempty"`

	// lastExitCode is the exit code of the first terminated container of the item's last run,
	// absent when the run ended without one (for example an evicted or deleted pod).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last exit code",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastExitCode *int32 `json:"lastExitCode,omitempty"`

	// lastReason says why the item's last run ended as it did: the reason of the first
	// terminated container (Completed, Error, OOMKilled, ...), or of the pod (Evicted, or
	// PodNotFound when it was deleted before it ended).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last reason",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastReason string `json:"lastReason,omitempty"`

	// lastResult is the result of the item's last finished run: succeeded, failed (a failed
	// probe of the open circuit breaker included, which lastFailure does not record) or
	// interrupted. A lock with spec.adaptive reads it, with lastPodName, to count the run once
	// its holder is released.
	// +kubebuilder:validation:Enum=succeeded;failed;interrupted
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last result",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastResult RunResult `json:"lastResult,omitempty"`

	// lastPodName is the name of the pod of the item's last finished run, kept so that its logs
	// can be read.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last pod",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastPodName string `json:"lastPodName,omitempty"`

	// recentRunSeconds are the durations, in seconds, of the item's latest finished runs that
	// were not interrupted, newest last (at most 5). Their maximum is the item's expected run
	// time for blackout windows with avoidOverrun.
	// +kubebuilder:validation:MaxItems=5
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Recent run seconds",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	RecentRunSeconds []int64 `json:"recentRunSeconds,omitempty"`

	// parkedGeneration is the group generation in which the item was parked: its last run exited
	// with an exit code of spec.exitCodes.doNotRetry, or its failures reached
	// spec.maxConsecutiveFailures. The item does not start again while the group's generation is
	// the same, until the group is reset or an OaatRun of the item starts. Zero when not parked.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Parked in generation",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	ParkedGeneration int64 `json:"parkedGeneration,omitempty"`

	// nextEligibleAt is when the item may start next as far as its history and the schedule
	// say, absent when it may start now or waits for no time (see waitReason). An eligible item
	// still waits for the group's running item and for its turn.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next eligible at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	NextEligibleAt *metav1.Time `json:"nextEligibleAt,omitempty"`

	// waitReason says why the item does not start before nextEligibleAt: Running,
	// SucceededRecently, CoolingOff, Blackout, Overrun, Suspended, Parked, Done, NextTick (with
	// spec.schedule, the item waits for the next round), LockHeld (a lock of spec.locks has no
	// slot for the group, see status.lockWait), BreakerOpen (the circuit breaker is open: the
	// item waits for the next probe, status.circuitBreaker.nextProbeAt) or Removed (the item is no longer the group's; its
	// entry goes with its last pod); absent when nothing holds it. Once
	// nextEligibleAt has passed the reason no longer applies.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Wait reason",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	WaitReason WaitReason `json:"waitReason,omitempty"`

	// lastVerified is when the item's newest successful verification (spec.verify) ended.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last verified",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastVerified *metav1.Time `json:"lastVerified,omitempty"`

	// verifiedRunFinishedAt is when the run that the newest successful verification verified
	// ended: the age of the item's newest verified result (for a backup, its newest restorable
	// snapshot).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Verified run finished at",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	VerifiedRunFinishedAt *metav1.Time `json:"verifiedRunFinishedAt,omitempty"`

	// lastVerifyFailure is when the item's newest failed verification ended. It never counts as
	// a failure of the item's run (lastFailure, failureCount).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Last verification failure",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LastVerifyFailure *metav1.Time `json:"lastVerifyFailure,omitempty"`
}

// OaatGroupStatus is the observed state of an OaatGroup.
type OaatGroupStatus struct {
	// observedGeneration is the generation of the spec that the status was computed from.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Observed generation",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are the group's conditions: Ready (the spec is valid and its OaatType found),
	// Running (an item pod is active) and, when they apply, Suspended, Parked, Complete,
	// ItemsValid, RoundOverrun (with spec.schedule), TargetAvailable (with
	// spec.circuitBreaker), AtRisk (the forecast) and Notified (with a sink).
	// +listType=map
	// +listMapKey=type
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// currentRun is the run in progress, absent when no item runs.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Current run",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	CurrentRun *CurrentRun `json:"currentRun,omitempty"`

	// runCount is the number of runs the group has started; the next run gets runCount+1, which
	// makes its pod name unique.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Runs started",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	RunCount int64 `json:"runCount,omitempty"`

	// itemCount is the number of items in the spec.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Item count",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	ItemCount int32 `json:"itemCount,omitempty"`

	// items holds the history of each item that has run, one entry per name. The operator
	// writes it whole: the list is atomic, so that an object's managedFields name the list once
	// rather than every item and its fields (which would take as much again as the list).
	// +listType=atomic
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Item history",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Items []ItemStatus `json:"items,omitempty"`

	// observedReset is the value of the oaat.io/reset annotation that the operator last acted
	// on; a different value starts a new round (see roundStartedAt).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Observed reset",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	ObservedReset string `json:"observedReset,omitempty"`

	// roundStartedAt is when the current round started: when the group was last reset, or, with
	// spec.schedule, the start of the round of the last tick (the tick plus its jitter) if that
	// came later. In mode EachOnce an item is done when it succeeded after this instant (any
	// success when absent); with a schedule, at or after it. A round's start is written once,
	// so a round whose items are not all done by the next tick is seen as an overrun exactly once.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Round started at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	RoundStartedAt *metav1.Time `json:"roundStartedAt,omitempty"`

	// nextRoundAt is, with spec.schedule, when the next round starts: the next tick plus its
	// jitter. Absent without a schedule.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Next round at",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	NextRoundAt *metav1.Time `json:"nextRoundAt,omitempty"`
	// lockWait is present while the group has an item ready to start that waits for locks of
	// spec.locks; the item's waitReason is LockHeld.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Waiting for locks",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	LockWait *LockWait `json:"lockWait,omitempty"`

	// circuitBreaker is the state of the circuit breaker of spec.circuitBreaker; absent without
	// one.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Circuit breaker",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	CircuitBreaker *CircuitBreakerStatus `json:"circuitBreaker,omitempty"`

	// notifications is the group's outbox of transitions to send as CloudEvents, while a sink
	// takes them (spec.notify, or the manager's cluster-wide sink).
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Notifications",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:hidden"}
	// +optional
	Notifications *NotificationsStatus `json:"notifications,omitempty"`

	// pendingVerification is the verification that an item's successful run made due
	// (spec.verify), until it has run; it takes the group's next turn.
	// +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pending verification",xDescriptors={"urn:alm:descriptor:text"}
	// +optional
	PendingVerification *PendingVerification `json:"pendingVerification,omitempty"`
}

// OaatGroup runs a set of items one at a time: at most one item pod of the group is live at any
// moment. The next item is the one that succeeded longest ago (never counts as oldest), then the
// one that failed longest ago, then one at random; items that succeeded within frequency or failed
// within failureCoolOff wait.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=oag,categories=oaat
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be at most 63 characters: it is a label value on the group's pods"
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.oaatType`
// +kubebuilder:printcolumn:name="Items",type=integer,JSONPath=`.status.itemCount`
// +kubebuilder:printcolumn:name="Running",type=string,JSONPath=`.status.currentRun.item`
// +kubebuilder:printcolumn:name="Frequency",type=string,JSONPath=`.spec.frequency`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +operator-sdk:csv:customresourcedefinitions:displayName="Oaat Group",resources={{Pod,v1},{OaatType,v1alpha1},{Event,v1}}
type OaatGroup struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec lists the items and how often they run.
	// +required
	Spec OaatGroupSpec `json:"spec"`

	// status is the observed state of the group and the history of its items.
	// +optional
	Status OaatGroupStatus `json:"status,omitempty"`
}

// OaatGroupList is a list of OaatGroups.
// +kubebuilder:object:root=true
type OaatGroupList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items is the list of OaatGroups.
	Items []OaatGroup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OaatGroup{}, &OaatGroupList{})
}
