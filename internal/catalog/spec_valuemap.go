package catalog

import (
	"context"
	"fmt"
	"slices"
	"strconv"
)

// ValueMapSpec declares a host's value map in the form of Zabbix 6.0's
// YAML export (a template's or host's valuemaps): a name and mappings.
// Apply creates it or, when the host has a map of that name, makes its
// mappings equal to these; it never deletes a map.
type ValueMapSpec struct {
	Name     string        `yaml:"name"`
	Mappings []MappingSpec `yaml:"mappings"`
	UUID     string        `yaml:"uuid"` // in Zabbix exports; accepted and ignored
}

// MappingSpec is one mapping: type EQUAL (default), GREATER_OR_EQUAL,
// LESS_OR_EQUAL, IN_RANGE, REGEXP or DEFAULT (or its number), value and
// newvalue.
type MappingSpec struct {
	Type     string `yaml:"type"`
	Value    string `yaml:"value"`
	NewValue string `yaml:"newvalue"`
}

// ValueMapRefSpec names a value map of the item's host, as Zabbix's
// export does under an item: valuemap: {name: ...}.
type ValueMapRefSpec struct {
	Name string `yaml:"name"`
}

var mappingTypeNames = []string{"EQUAL", "GREATER_OR_EQUAL", "LESS_OR_EQUAL", "IN_RANGE", "REGEXP", "DEFAULT"}

// specValueMaps is what Apply does about value maps once the hosts and
// items are in: per host, the maps to create or update and which item
// (by key) uses which map (by name).
type specValueMaps struct {
	host  string
	field string
	maps  []ValueMap // HostID and ID unset
	items map[string]string
	// itemField names each item's valuemap field for errors.
	itemField map[string]string
}

// valueMapSpecs validates the value maps of s and the items' references
// to them: a name an item gives must be one of its host's maps, in the
// document or, checked by Apply, in the catalog.
func (s Spec) valueMapSpecs() ([]specValueMaps, error) {
	var el errList
	var out []specValueMaps
	for hi := range s.Hosts {
		hs := &s.Hosts[hi]
		p := "hosts[" + strconv.Itoa(hi) + "]"
		sv := specValueMaps{host: hs.Host, field: p}
		names := map[string]bool{}
		for vi, vs := range hs.ValueMaps {
			f := p + ".valuemaps[" + strconv.Itoa(vi) + "]"
			checkValueMapName(f+".name", vs.Name, &el)
			if names[vs.Name] {
				el.addf(f+".name", "value map %q is declared twice", vs.Name)
			}
			names[vs.Name] = true
			m := ValueMap{Name: vs.Name}
			for mi, ms := range vs.Mappings {
				t, err := enumValue(ms.Type, mappingTypeNames, 0)
				if err != nil {
					el.add(f+".mappings["+strconv.Itoa(mi)+"].type", err)
				}
				m.Mappings = append(m.Mappings, Mapping{Type: MappingType(t), Value: ms.Value, NewValue: ms.NewValue})
			}
			checkMappings(f+".mappings", m.Mappings, &el)
			sv.maps = append(sv.maps, m)
		}
		for ii, is := range hs.Items {
			if is.ValueMap == nil {
				continue
			}
			if sv.items == nil {
				sv.items, sv.itemField = map[string]string{}, map[string]string{}
			}
			f := p + ".items[" + strconv.Itoa(ii) + "].valuemap.name"
			if is.ValueMap.Name == "" {
				el.addf(f, "cannot be empty")
			}
			sv.items[is.Key], sv.itemField[is.Key] = is.ValueMap.Name, f
		}
		if len(sv.maps) > 0 || len(sv.items) > 0 {
			out = append(out, sv)
		}
	}
	return out, el.err()
}

// applyValueMaps creates or updates the spec's value maps and points the
// items that name one at it, in one Edit. It returns how many maps were
// created and updated. c.mu is held.
func (c *Catalog) applyValueMaps(ctx context.Context, specs []specValueMaps) (created, updated int, err error) {
	_, err = c.editLocked(ctx, func(e *Edit) error {
		var ups []ItemUpdate
		for _, sv := range specs {
			hid := e.hostByName(sv.host)
			if hid == 0 {
				return fmt.Errorf("BUG: host %q of the spec is not in the catalog after Apply", sv.host)
			}
			var news []ValueMap
			var changes []ValueMapUpdate
			for _, m := range sv.maps {
				id := e.valueMapByName(hid, m.Name)
				if id == 0 {
					m.HostID = hid
					news = append(news, m)
					continue
				}
				if cur := e.valueMap(id); !slices.Equal(cur.Mappings, m.Mappings) {
					changes = append(changes, ValueMapUpdate{ID: id, Mappings: &m.Mappings})
				}
			}
			if _, err := e.CreateValueMaps(news); err != nil {
				return prefixSpecField(sv.field, err)
			}
			if err := e.UpdateValueMaps(changes); err != nil {
				return prefixSpecField(sv.field, err)
			}
			created, updated = created+len(news), updated+len(changes)
			var el errList
			for key, name := range sv.items {
				vm := e.valueMapByName(hid, name)
				if vm == 0 {
					el.addf(sv.itemField[key], "host %q has no value map %q: declare it under the host's valuemaps", sv.host, name)
					continue
				}
				iid := e.itemByKey(hid, key)
				if it := e.item(iid); it != nil && it.ValueMapID != vm {
					ups = append(ups, ItemUpdate{ID: iid, ValueMapID: &vm})
				}
			}
			if err := el.err(); err != nil {
				return err
			}
		}
		return e.UpdateItems(ups)
	})
	return created, updated, err
}

// prefixSpecField makes the field errors of a batch name the spec's host
// ("hosts[2].valuemaps[0].name").
func prefixSpecField(prefix string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", prefix, err)
}
