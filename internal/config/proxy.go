package config

import "time"

// ProxyConfig is how often Peregrine exchanges with passive Zabbix
// proxies (status 6), Zabbix's ProxyConfigFrequency and
// ProxyDataFrequency. Restart to change.
type ProxyConfig struct {
	// ConfigFrequency is how often a passive proxy is sent its
	// configuration (6.0's default 10s; Zabbix 6.0 takes 1s to 1 week).
	ConfigFrequency Duration `yaml:"config_frequency"`
	// DataFrequency is how often a passive proxy is asked for its data
	// (6.0's default 1s; 1s to 1h).
	DataFrequency Duration `yaml:"data_frequency"`
}

func defaultProxy() ProxyConfig {
	return ProxyConfig{ConfigFrequency: Duration(10 * time.Second), DataFrequency: Duration(time.Second)}
}

func (p *ProxyConfig) validate() error {
	if p.ConfigFrequency < Duration(time.Second) || p.ConfigFrequency > Duration(7*24*time.Hour) {
		return fieldErr("proxy.config_frequency", "must be between 1s and 1w (Zabbix's ProxyConfigFrequency), not %s", p.ConfigFrequency)
	}
	if p.DataFrequency < Duration(time.Second) || p.DataFrequency > Duration(time.Hour) {
		return fieldErr("proxy.data_frequency", "must be between 1s and 1h (Zabbix's ProxyDataFrequency), not %s", p.DataFrequency)
	}
	return nil
}
