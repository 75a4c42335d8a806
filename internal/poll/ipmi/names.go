package ipmi

// The names ipmi.get writes for sensor types, reading types, units and
// states are those of OpenIPMI 2.0.33, the library Zabbix 6.0 reads
// IPMI through (Debian 12's libopenipmi0), as ipmi.get shows them
// (recorded from 6.0.14 against ipmi_sim: "temperature",
// "sensor specific", "C", "presence detected, power supply AC lost",
// "upper non-critical - out of range"). They are data an LLD rule may
// match on, kept as OpenIPMI spells them, misspellings included.

var sensorTypeNames = []string{
	"unspecified", "temperature", "voltage", "current", "fan", "physical_security", "platform_security",
	"processor", "power_supply", "power_unit", "cooling_device", "other_units_based_sensor", "memory",
	"drive_slot", "power_memory_resize", "system_firmware_progress", "event_logging_disabled", "watchdog_1",
	"system_event", "critical_interrupt", "button", "module_board", "microcontroller_coprocessor",
	"add_in_card", "chassis", "chip_set", "other_fru", "cable_interconnect", "terminator",
	"system_boot_initiated", "boot_error", "os_boot", "os_critical_stop", "slot_connector",
	"system_acpi_power_state", "watchdog_2", "platform_alert", "entity_presence", "monitor_asic_ic", "lan",
	"management_subsystem_health", "battery", "session_audit", "version_change", "fru_state",
}

func sensorTypeName(t uint8) string {
	if int(t) < len(sensorTypeNames) {
		return sensorTypeNames[t]
	}
	return "invalid"
}

var readingTypeNames = []string{
	"unspecified", "threshold", "discrete_usage", "discrete_state", "discrete_predictive_failure",
	"discrete_limit_exceeded", "discrete_performance_met", "discrete_severity", "discrete_device_presence",
	"discrete_device_enable", "discrete_availability", "discrete_redundancy", "discrete_acpi_power",
}

// readingSensorSpecific is the event/reading type code of sensor
// specific states.
const readingSensorSpecific = 0x6f

func readingTypeName(t uint8) string {
	if t == readingSensorSpecific {
		return "sensor specific"
	}
	if int(t) < len(readingTypeNames) {
		return readingTypeNames[t]
	}
	return "invalid"
}

var unitNames = []string{
	"unspecified", "C", "F", "K", "volts", "amps", "watts", "joules", "coulombs", "VA", "nits", "lumens",
	"lux", "candela", "kpa", "PSI", "newtons", "CFM", "RPM", "HZ", "useconds", "mseconds", "seconds",
	"minute", "hour", "day", "week", "mil", "inches", "feet", "cubic inchs", "cubic feet", "millimeters",
	"centimeters", "meters", "cubic centimeters", "cubic meters", "liters", "fluid ounces", "radians",
	"seradians", "revolutions", "cycles", "gravities", "ounces", "pounds", "foot pounds", "ounce inches",
	"gauss", "gilberts", "henries", "mhenries", "farads", "ufarads", "ohms", "siemens", "moles",
	"becquerels", "PPM", "unspecified", "decibels", "DbA", "DbC", "grays", "sieverts", "color temp deg K",
	"bits", "kbits", "mbits", "gbits", "bytes", "kbytes", "mbytes", "gbytes", "words", "dwords", "qwords",
	"lines", "hits", "misses", "retries", "resets", "overruns", "underruns", "collisions", "packets",
	"messages", "characters", "errors", "correctable_errors", "uncorrectable_errors", "fatal errors", "grams",
}

func unitName(u uint8) string {
	if int(u) < len(unitNames) {
		return unitNames[u]
	}
	return "invalid"
}

// thresholdNames are the thresholds in the order of their bits in a
// reading's threshold state and in Get Sensor Thresholds.
var thresholdNames = [6]string{"lower non-critical", "lower critical", "lower non-recoverable",
	"upper non-critical", "upper critical", "upper non-recoverable"}

// genericStates are the state names of the generic event/reading types
// 0x01-0x0c, by type then offset.
var genericStates = [][]string{
	nil,
	{"lower non-critical - going low", "lower non-critical - going high", "lower critical - going low",
		"lower critical - going high", "lower non-recoverable - going low", "lower non-recoverable - going high",
		"upper non-critical - going low", "upper non-critical - going high", "upper critical - going low",
		"upper critical - going high", "upper non-recoverable - going low", "upper non-recoverable - going high"},
	{"transition to idle", "transition to active", "transition to busy"},
	{"state deasserted", "state asserted"},
	{"predictive failure deasserted", "predictive failure asserted"},
	{"limit not exceeded", "limit exceeded"},
	{"performance met", "performance lags"},
	{"transition to ok", "transition to non-critical from ok", "transition to critical from ok",
		"transition to non-recoverable from less severe", "transition to non-critical from more severe",
		"transition to critical from non-recoverable", "transition to non-recoverable", "monitor", "informational"},
	{"device removed/absent", "device inserted/present"},
	{"device disabled", "device enabled"},
	{"transition to ", "transition to in test", "transition to power off", "transition to on line",
		"transition to off line", "transition to off duty", "transition to degraded", "transition to power save",
		"install error"},
	{"fully redundant", "redundancy lost", "redundancy degraded",
		"non-redundant: sufficient resources from redundant",
		"non-redundant: sufficient resources from insufficient resources", "non-redundant: insufficient resources",
		"redundancy degraded from fully redundant", "redundancy degraded from non-redundant"},
	{"D0 power state", "D1 power state", "D2 power state", "D3 power state"},
}

// specificStates are the sensor-specific state names by sensor type
// then offset ("" where OpenIPMI has none: "unknown").
var specificStates = map[uint8][]string{
	0x05: {"general chassis intrusion", "drive bay intrusion", "I/O card area intrusion", "processor area intrusion",
		"LAN leash lost", "unauthorized doc/undock", "fan area intrusion"},
	0x06: {"secure mode", "pre-boot password violation - user password", "pre-boot password violation - setup password",
		"pre-boot password violation - network boot password", "other pre-boot password violation",
		"out-of-band access password violation"},
	0x07: {"IERR", "Thermal Trip", "FRB1/BIST failure", "FRB2/Hand in POST failure",
		"FRB3/Processor startup/initialization failure", "configuration error",
		"SM BIOS 'uncorrectable CPU-complex error'", "processor presence detected", "processor disabled",
		"terminator presence detected"},
	0x08: {"presence detected", "power supply failure detected", "predictive failure", "power supply AC lost",
		"AC lost or out-of-range", "AC out of range, but present"},
	0x09: {"power off/power down", "power cycle", "240VA power down", "interlock power down", "AC lost",
		"soft power control failure", "power unit falure detected", "predictive failure"},
	0x0c: {"correctable ECC", "uncorrectable ECC", "parity", "memory scrub failed (stuck bit)",
		"memory device disabled", "correctable ECC log limit reached", "presence detected", "configuration error",
		"spare", "memory automatically throttled"},
	0x0d: {"drive presence", "drive fault", "predictive failure", "hot spare", "consistancy/parity check in progress",
		"in critical array", "in failed array", "rebuild/remap in progress", "rebuild/remap aborted"},
	0x0f: {"system firmware error", "system firmware hang", "system firmware progress"},
	0x10: {"correctable memory error logging disabled", "event type logging disabled", "log area reset/cleared",
		"all event logging disabled"},
	0x11: {"BIOS watchdog reset", "OS watchdog reset", "os watchdog shutdown", "os watchdog power down",
		"os watchdog power cycle", "os watchdog NMI/diag interrupt", "os watchdog expired",
		"os watchdog pretimout interrupt"},
	0x12: {"system reconfigured", "OEM system boot event", "undetermined system hardware failure",
		"entry added to auxiliary log", "PEF action", "Timestamp clock sync"},
	0x13: {"front panel NMI/diag interrupt", "bus timeout", "I/O channel check NMI", "software NMI", "PCI PERR",
		"PCI SERR", "EISA fail safe timeout", "bus correctable error", "bus uncorrectable error", "fatal NMI"},
	0x14: {"power button pressed", "sleep button pressed", "reset button pressed"},
	0x1b: {"cable/interconnect is connected", "configuration error"},
	0x1d: {"initiated by power up", "initiated by hard reset", "initiated by warm reset", "user requested PXE boot",
		"automatic boot to diagnostic", "OS initiated hard reset", "OS initiated warm reset", "System restart"},
	0x1e: {"no bootable media", "non-bootable diskette left in drive", "PXE server not found", "invalid boot sector",
		"timeout waiting for user selection of boot source"},
	0x1f: {"A: boot completed", "C: boot completed", "PXE boot completed", "diagnostic boot completed",
		"CD-ROM boot completed", "ROM boot completed", "boot completed"},
	0x20: {"stop during OS load/initialization", "run time critical stop", "OS Graceful Stop",
		"Soft shutdown initiated by PEF", "Agent not responding, graceful shutdown did not occur"},
	0x21: {"fault status asserted", "identify status asserted", "slot/connector device installed/attached",
		"slot/connector ready for device installation", "slot/connector ready for device removal", "slot power is off",
		"slot/connector device removal request", "interlock asserted", "slot is disabled"},
	// OpenIPMI joins offsets 6 and 7 of 0x22 into one name (a missing
	// comma), so its later names are one offset early; kept as it is.
	0x22: {"S0/G0 working", "S1 'Sleeping with system H/W & processor context maintained'",
		"S2 'sleeping, processor context lost'", "S3 'sleeping, processor & h/w context lost, memory retained'",
		"S4 'non-volatile sleep/suspend to disk'", "S5/G2 soft-off", "S4/S5 soft-offG3 mechanical off",
		"sleeping in an S1, S2, or S3 state", "G1 sleeping", "S5 entered by override", "legacy on state",
		"legacy off state", "", "unknown"},
	0x23: {"timer expired", "hard reset", "power down", "power cycle", "", "", "", "", "timer interrupt"},
	0x24: {"platform generated page", "platform generated LAN alert", "platform event trap generated",
		"platform generated SNMP trap"},
	0x25: {"entity present", "entity absent", "entity disabled"},
	0x27: {"LAN heartbeat lost", "LAN heartbeat"},
	0x28: {"sensor access degraded or unavailable", "controller access degraded or unavailable",
		"management controller off-line", "management controller unavailable", "sensor failure", "FRU failure"},
	0x29: {"battery low", "battery failed", "battery presence detected"},
}

// stateName is the name of state offset of a discrete sensor.
func stateName(readingType, sensorType uint8, offset int) string {
	var names []string
	if readingType == readingSensorSpecific {
		names = specificStates[sensorType]
	} else if int(readingType) < len(genericStates) {
		names = genericStates[readingType]
	}
	if offset < len(names) && names[offset] != "" {
		return names[offset]
	}
	return "unknown"
}
