package catalog

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Formats of a Zabbix export document (configuration.import's format).
const (
	FormatYAML = "yaml"
	FormatXML  = "xml"
	FormatJSON = "json"
)

// maxExportSize bounds a document ParseExport reads; Zabbix's largest
// official template is under 1 MiB.
const maxExportSize = 64 << 20

// ErrMalformed marks a document that is not well-formed YAML, XML or
// JSON; its text is Zabbix 6.0's ("Cannot read XML: ...").
var ErrMalformed = errors.New("malformed document")

// MalformedError is a document ParseExport cannot read, in Zabbix
// 6.0's words (Text); errors.Is(err, ErrMalformed) holds.
type MalformedError struct{ Text string }

func (e *MalformedError) Error() string { return e.Text }

// Is reports target == ErrMalformed.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

func malformed(format string, args ...any) error {
	return &MalformedError{Text: fmt.Sprintf(format, args...)}
}

// ParseExportTree reads a Zabbix export document of the format (yaml,
// xml or json) into its YAML tree, as ParseExport reads it before
// decoding it (configuration.importcompare compares such trees): a
// MalformedError in 6.0's words when it does not parse.
func ParseExportTree(format string, b []byte) (*yaml.Node, error) {
	if len(b) > maxExportSize {
		return nil, malformed("The document is larger than %d bytes.", maxExportSize)
	}
	switch format {
	case FormatYAML:
		if len(bytes.TrimSpace(b)) == 0 {
			return nil, malformed("Cannot read YAML: File is empty.")
		}
		var n yaml.Node
		if err := yaml.Unmarshal(b, &n); err != nil {
			return nil, malformed("Cannot read YAML: %v.", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		trimLastNewline(&n)
		return &n, nil
	case FormatJSON:
		if !json.Valid(b) {
			// 6.0's words, recorded from 6.0.14.
			return nil, malformed("Cannot read JSON: Syntax error.")
		}
		var n yaml.Node
		if err := yaml.Unmarshal(b, &n); err != nil {
			return nil, malformed("Cannot read JSON: %v.", err)
		}
		return &n, nil
	case FormatXML:
		n, err := xmlToNode(b)
		if err != nil {
			return nil, malformed("Cannot read XML: %v.", err)
		}
		return n, nil
	}
	return nil, malformed("Format %q is not one of yaml, xml, json.", format)
}

// ParseExport decodes a Zabbix export document of the format (yaml,
// xml or json) into a validated Spec holding it as its ZabbixExport:
// the same Spec ParseSpec gives for a YAML file, so that the API's
// configuration.import and `peregrine import` read files alike. XML
// lists are told from maps by Zabbix's list tags (<items><item>...).
func ParseExport(format string, b []byte) (Spec, error) {
	root, err := ParseExportTree(format, b)
	if err != nil {
		return Spec{}, err
	}
	var s Spec
	if err := decodeKnown(root, &s); err != nil {
		return Spec{}, err
	}
	if s.ZabbixExport == nil && len(s.Groups)+len(s.Hosts)+len(s.Macros)+len(s.Templates) == 0 {
		// 6.0's words, recorded from 6.0.14.
		return Spec{}, &FieldError{Field: "", Err: errors.New(`the tag "zabbix_export" is missing`)}
	}
	if s.ZabbixExport == nil || len(s.Groups)+len(s.Hosts)+len(s.Macros)+len(s.Templates) > 0 {
		return Spec{}, &FieldError{Field: "zabbix_export", Err: errors.New("the document must hold one zabbix_export and nothing else")}
	}
	if err := s.Validate(); err != nil {
		return Spec{}, err
	}
	return s, nil
}

// trimLastNewline drops one trailing newline from every string of a
// YAML document, as 6.0's YAML reader does: a literal block ("|") ends
// in a newline that its export never wrote.
func trimLastNewline(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!str" || n.Tag == "") {
		n.Value = strings.TrimSuffix(n.Value, "\n")
	}
	for _, c := range n.Content {
		trimLastNewline(c)
	}
}

// decodeKnown decodes n into v refusing unknown fields (those are
// collected by the Unsupported members and refused by Validate).
func decodeKnown(n *yaml.Node, v any) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n); err != nil {
		return malformed("Cannot read the document: %v.", err)
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// xmlListTags are Zabbix 6.0's XML list elements and the tag of their
// members.
var xmlListTags = map[string]string{
	"groups": "group", "templates": "template", "hosts": "host", "items": "item", "triggers": "trigger",
	"graphs": "graph", "graph_items": "graph_item", "valuemaps": "valuemap", "mappings": "mapping",
	"macros": "macro", "tags": "tag", "dashboards": "dashboard", "pages": "page", "widgets": "widget",
	"fields": "field", "preprocessing": "step", "parameters": "parameter", "discovery_rules": "discovery_rule",
	"item_prototypes": "item_prototype", "trigger_prototypes": "trigger_prototype",
	"graph_prototypes": "graph_prototype", "host_prototypes": "host_prototype", "dependencies": "dependency",
	"httptests": "httptest", "steps": "step", "headers": "header", "variables": "variable",
	"query_fields": "query_field", "conditions": "condition", "lld_macro_paths": "lld_macro_path",
	"overrides": "override", "operations": "operation", "interfaces": "interface",
	"group_links": "group_link", "group_prototypes": "group_prototype", "media_types": "media_type",
	"message_templates": "message_template", "opperiod": "", "optag": "tag", "optemplate": "template",
	"maps": "map", "images": "image", "selements": "selement", "links": "link", "urls": "url",
	"value_maps": "value_map", "posts": "post_field",
}

// xmlToNode reads an XML document into the YAML tree its YAML export
// would be.
func xmlToNode(b []byte) (*yaml.Node, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	type frame struct {
		name     string
		children []*yaml.Node // key, value pairs in order
		names    []string
		text     strings.Builder
	}
	var stack []*frame
	var root *yaml.Node
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > 256 {
				return nil, errors.New("elements nested too deep")
			}
			stack = append(stack, &frame{name: t.Name.Local})
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(t)
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			var n *yaml.Node
			_, isList := xmlListTags[f.name]
			sameNames := len(f.names) > 1
			for _, nm := range f.names {
				if nm != f.names[0] {
					sameNames = false
				}
			}
			switch {
			case (isList || sameNames) && !(len(f.names) == 0 && strings.TrimSpace(f.text.String()) != ""):
				n = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				for i := 1; i < len(f.children); i += 2 {
					n.Content = append(n.Content, f.children[i])
				}
			case len(f.names) > 0:
				n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: f.children}
			default:
				n = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.text.String()}
			}
			if len(stack) == 0 {
				root = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map",
					Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.name}, n}}}}
				continue
			}
			p := stack[len(stack)-1]
			p.names = append(p.names, f.name)
			p.children = append(p.children, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.name}, n)
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	return root, nil
}

// ZabbixPath writes a FieldError's path ("zabbix_export.templates[0].
// items[3].key") as Zabbix 6.0 names the element in its import errors
// ("/zabbix_export/templates/template(1)/items/item(4)/key").
func ZabbixPath(field string) string {
	desc := ""
	if i := strings.Index(field, " ("); i >= 0 {
		field, desc = field[:i], field[i:]
	}
	var b strings.Builder
	for _, part := range strings.Split(field, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		b.WriteString("/" + name)
		if hasIdx {
			i, err := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			member := xmlListTags[name]
			if member == "" {
				member = strings.TrimSuffix(name, "s")
			}
			if err == nil {
				fmt.Fprintf(&b, "/%s(%d)", member, i+1)
			}
		}
	}
	return b.String() + desc
}
