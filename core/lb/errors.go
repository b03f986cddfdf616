package lb

import "errors"

// Errors returned by Picker methods and the parsers. The runtime layer maps
// them to HAProxy's CLI replies; the config layer prints them as alerts.
var (
	// ErrStaticWeight: a static algorithm (static-rr, map-based hashing)
	// accepts only weight 0 or the server's initial weight at run time.
	ErrStaticWeight = errors.New("lb: static algorithm accepts only weights 0% and 100%")
	// ErrNotDynamic: the algorithm cannot add or remove servers at run time.
	ErrNotDynamic = errors.New("lb: algorithm does not support dynamic servers")
	// ErrWeight: a weight outside 0..256.
	ErrWeight = errors.New("lb: weight must be between 0 and 256")
	// ErrIndex: the server index is unknown (or already in use for Add).
	ErrIndex = errors.New("lb: bad server index")
)
