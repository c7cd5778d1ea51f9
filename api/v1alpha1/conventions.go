package v1alpha1

// Labels and annotations that the operator puts on item pods.
const (
	// LabelManagedBy is the standard label that marks the operator's pods.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of LabelManagedBy on item pods.
	ManagedByValue = "oaat-operator"
	// LabelGroup holds the name of the OaatGroup a pod runs an item of. A live pod with this
	// label that is not the group's current run is deleted.
	LabelGroup = "oaat.io/group"
	// LabelItem holds the item in a form that is a valid label value; the exact item is in
	// AnnotationItem.
	LabelItem = "oaat.io/item"
	// LabelRun holds the run number of the pod (status.runCount when it was started).
	LabelRun = "oaat.io/run"
	// AnnotationItem holds the exact item a pod runs.
	AnnotationItem = "oaat.io/item"
	// EnvItem is the environment variable that holds the item in every container.
	EnvItem = "OAAT_ITEM"
)

// Condition types of an OaatGroup.
const (
	// ConditionReady is True when the group's spec is valid and its OaatType is found and usable.
	ConditionReady = "Ready"
	// ConditionRunning is True while an item pod of the group is active.
	ConditionRunning = "Running"
)

// Reasons of the Ready condition.
const (
	// ReasonReady: the spec is valid and the OaatType found.
	ReasonReady = "Ready"
	// ReasonInvalidSpec: the group's spec cannot be used (for example a malformed duration).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonOaatTypeNotFound: the OaatType named by spec.oaatType does not exist.
	ReasonOaatTypeNotFound = "OaatTypeNotFound"
	// ReasonInvalidOaatType: the OaatType exists but cannot make a pod.
	ReasonInvalidOaatType = "InvalidOaatType"
	// ReasonPodCreateFailed: the API server refused the item pod.
	ReasonPodCreateFailed = "PodCreateFailed"
)

// Reasons of the Running condition.
const (
	// ReasonItemRunning: an item pod is active.
	ReasonItemRunning = "ItemRunning"
	// ReasonIdle: no item pod is active.
	ReasonIdle = "Idle"
)

// Reasons of events and of ItemStatus.lastReason beyond those of Kubernetes itself.
const (
	// ReasonRunStarted: an item pod was created.
	ReasonRunStarted = "RunStarted"
	// ReasonRunSucceeded: an item pod ended in phase Succeeded.
	ReasonRunSucceeded = "RunSucceeded"
	// ReasonRunFailed: an item pod ended in phase Failed, or disappeared.
	ReasonRunFailed = "RunFailed"
	// ReasonRoguePodDeleted: a live pod with the group's labels that is not its current run was
	// deleted.
	ReasonRoguePodDeleted = "RoguePodDeleted"
	// ReasonPodNotFound: the run's pod does not exist (deleted while the operator was away, or
	// never created because the operator stopped between deciding and creating).
	ReasonPodNotFound = "PodNotFound"
)
