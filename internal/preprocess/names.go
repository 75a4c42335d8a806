package preprocess

import (
	"strconv"
	"strings"
)

// stepNames are the step types as Zabbix's YAML/XML export names them
// (the API numbers them; the export spells them out). The catalog's
// import keeps its own copy, since it cannot import this package;
// TestExportNamesMatchCatalogImport keeps the two equal.
var stepNames = [...]string{
	StepMultiplier: "MULTIPLIER", StepRTrim: "RTRIM", StepLTrim: "LTRIM", StepTrim: "TRIM",
	StepRegsub: "REGEX", StepBool2Dec: "BOOL_TO_DECIMAL", StepOct2Dec: "OCTAL_TO_DECIMAL",
	StepHex2Dec: "HEX_TO_DECIMAL", StepDeltaValue: "SIMPLE_CHANGE", StepDeltaSpeed: "CHANGE_PER_SECOND",
	StepXPath: "XMLPATH", StepJSONPath: "JSONPATH", StepValidateRange: "IN_RANGE",
	StepValidateRegex: "MATCHES_REGEX", StepValidateNotRegex: "NOT_MATCHES_REGEX",
	StepErrorFieldJSON: "CHECK_JSON_ERROR", StepErrorFieldXML: "CHECK_XML_ERROR",
	StepErrorFieldRegex: "CHECK_REGEX_ERROR", StepThrottleValue: "DISCARD_UNCHANGED",
	StepThrottleTimed: "DISCARD_UNCHANGED_HEARTBEAT", StepJavaScript: "JAVASCRIPT",
	StepPrometheusPattern: "PROMETHEUS_PATTERN", StepPrometheusToJSON: "PROMETHEUS_TO_JSON",
	StepCSVToJSON: "CSV_TO_JSON", StepStrReplace: "STR_REPLACE", StepCheckUnsupported: "CHECK_NOT_SUPPORTED",
	StepXMLToJSON: "XML_TO_JSON",
}

// handlerNames are the error handlers as the export names them; an
// omitted error_handler is ORIGINAL_ERROR.
var handlerNames = [...]string{
	HandlerDefault: "ORIGINAL_ERROR", HandlerDiscard: "DISCARD_VALUE",
	HandlerSetValue: "CUSTOM_VALUE", HandlerSetError: "CUSTOM_ERROR",
}

// String is the type's export name ("JSONPATH"), or its number if it has
// none.
func (t StepType) String() string {
	if int(t) < len(stepNames) && stepNames[t] != "" {
		return stepNames[t]
	}
	return strconv.Itoa(int(t))
}

// String is the handler's export name ("DISCARD_VALUE").
func (h Handler) String() string {
	if int(h) < len(handlerNames) {
		return handlerNames[h]
	}
	return strconv.Itoa(int(h))
}

// StepTypeByName returns the type of an export name ("JSONPATH").
func StepTypeByName(name string) (StepType, bool) {
	for t, n := range stepNames {
		if n != "" && n == name {
			return StepType(t), true
		}
	}
	return 0, false
}

// HandlerByName returns the error handler of an export name; "" is the
// default, as an omitted error_handler is.
func HandlerByName(name string) (Handler, bool) {
	if name == "" {
		return HandlerDefault, true
	}
	for h, n := range handlerNames {
		if n == name {
			return Handler(h), true
		}
	}
	return 0, false
}

// ParseExportStep builds a Step from a step as Zabbix's YAML export
// writes it: the type and error handler by name, the parameters as a
// list. It maps them to the API's form and validates with ParseStep, so
// an imported step obeys the API's rules. The export writes a list with
// one empty string for the types without parameters (CHANGE_PER_SECOND,
// parameters: [”]); joined with LF that is the API's empty params.
func ParseExportStep(typeName string, parameters []string, handlerName, handlerParams string) (Step, error) {
	t, ok := StepTypeByName(typeName)
	if !ok {
		return Step{}, &ParamError{Field: "type", Msg: `unknown preprocessing step type "` + typeName + `"`}
	}
	h, ok := HandlerByName(handlerName)
	if !ok {
		return Step{}, &ParamError{Field: "error_handler", Msg: `unknown error handler "` + handlerName + `" (expected ORIGINAL_ERROR, DISCARD_VALUE, CUSTOM_VALUE or CUSTOM_ERROR)`}
	}
	return ParseStep(strconv.Itoa(int(t)), strings.Join(parameters, "\n"), strconv.Itoa(int(h)), handlerParams)
}
