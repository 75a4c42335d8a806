package testutil

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// IPMISim is a running OpenIPMI BMC simulator (Debian openipmi's
// ipmi_sim) started by StartIPMISim.
type IPMISim struct {
	// Addr is its LAN channel, "127.0.0.1:port" (UDP; IPMI v1.5 and
	// v2.0 RMCP+).
	Addr string
	// User and Password are its admin user's.
	User, Password string
	console        string // its emulation console, a TCP "127.0.0.1:port"
}

// IPMISimSensors is the simulator's small sensor set, as an sdrcomp
// file (the openipmi package's SDR compiler): sensor 1, "CPU Temp", a
// threshold temperature sensor of the system board (entity 7.1),
// readings 5·raw−10 tenths of °C, upper thresholds readable; sensor 2,
// "PS1 Status", a sensor-specific power supply sensor (entity 10.1)
// returning states 0-3.
const IPMISimSensors = `
sdr type 1
	sensor_owner_id		0x20
	sensor_owner_lun	0
	channel_number		0
	sensor_number		1
	entity_id		system_board
	entity_instance		1
	sensor_type		Temperature
	init_scanning		true
	init_events		true
	init_thresholds		true
	init_sensor_type	true
	default_event_gen_on	true
	default_sensor_scan_on	true
	event_reading_type_code	1
	analog_data_format	unsigned
	rate_unit		none
	modifier_unit		none
	percentage		false
	base_unit		degrees_C
	modifier_unit_code	unspecified
	linearization		linear
	m			5
	tolerance		0
	b			-10
	accuracy		1
	accuracy_exp		0
	sensor_direction	input
	r_exp			-1
	b_exp			0
	sensor_maximum		255
	sensor_minimum		0
	sensor_threshold_access	readable
	unc_thrsh_readable	true
	uc_thrsh_readable	true
	unr_thrsh_readable	true
	return_unc		true
	return_uc		true
	return_unr		true
	id_string		"CPU Temp"
endsdr
sdr type 2
	sensor_owner_id		0x20
	sensor_owner_lun	0
	channel_number		0
	sensor_number		2
	entity_id		power_supply
	entity_instance		1
	sensor_type		Power_Supply
	init_scanning		true
	init_sensor_type	true
	default_sensor_scan_on	true
	event_reading_type_code	0x6f
	event0_state_ret	true
	event1_state_ret	true
	event2_state_ret	true
	event3_state_ret	true
	id_string		"PS1 Status"
endsdr
`

// ipmiSimSetup is the emulation: the BMC at 0x20, the two sensors of
// IPMISimSensors with CPU Temp at raw 0x60 (47 °C; thresholds 55, 71
// and 79 °C) and PS1 Status with states 0 and 3 set (presence
// detected, AC lost: 9).
const ipmiSimSetup = `mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02
sel_enable 0x20 50 0x0a
sensor_add 0x20 0 1 0x01 0x01
sensor_set_value 0x20 0 1 0x60 0
sensor_set_event_support 0x20 0 1 enable scanning per-state 000111111000000 000111111000000 000111111000000 000111111000000
sensor_set_threshold 0x20 0 1 settable 111000 0xa0 0x90 0x70 00 00 00
sensor_add 0x20 0 2 0x08 0x6f
sensor_set_event_support 0x20 0 2 enable scanning per-state 000000000001111 000000000001111 000000000001111 000000000001111
sensor_set_bit 0x20 0 2 0 1 0
sensor_set_bit 0x20 0 2 3 1 0
`

// StartIPMISim starts ipmi_sim on a free UDP port of 127.0.0.1 with a
// LAN configuration and the sensors above (compiled with sdrcomp),
// state kept in the test's directory; it is stopped when the test ends.
// The test is skipped when openipmi is not installed.
func StartIPMISim(t testing.TB) *IPMISim {
	t.Helper()
	bin := Need(t, "ipmi_sim", "openipmi")
	sdrcomp := Need(t, "sdrcomp", "openipmi")
	dir := t.TempDir()
	s := &IPMISim{User: "peregrine", Password: "ipmi-secret"}
	port := freeUDPPort(t)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.console = net.JoinHostPort("127.0.0.1", strconv.Itoa(freeTCPPort(t)))

	sdrs, bin2 := filepath.Join(dir, "sim.sdrs"), filepath.Join(dir, "sim.sdr")
	if err := os.WriteFile(sdrs, []byte(IPMISimSensors), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(sdrcomp, "-r", "-o", bin2, sdrs).CombinedOutput(); err != nil {
		t.Fatalf("sdrcomp: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(bin2)
	if err != nil {
		t.Fatal(err)
	}
	var emu bytes.Buffer
	emu.WriteString(ipmiSimSetup)
	for len(raw) >= 5 { // each record: its 5-byte header, then its body
		n := min(5+int(raw[4]), len(raw))
		emu.WriteString("main_sdr_add 0x20")
		for _, b := range raw[:n] {
			fmt.Fprintf(&emu, " 0x%02x", b)
		}
		emu.WriteString("\n")
		raw = raw[n:]
	}
	emu.WriteString("mc_enable 0x20\n")

	host, cport, _ := net.SplitHostPort(s.console)
	conf := fmt.Sprintf(`name "peregrine"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 %d
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  user 2 true %q %q admin 10 none md2 md5 straight
console %s %s
`, port, s.User, s.Password, host, cport)
	confPath, emuPath := filepath.Join(dir, "lan.conf"), filepath.Join(dir, "sim.emu")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(emuPath, emu.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", confPath, "-f", emuPath, "-s", state, "-n")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting ipmi_sim: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	// Ready once its console accepts a command.
	end := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-done:
			t.Fatalf("ipmi_sim exited at start:\n%s", out.String())
		default:
		}
		if err := s.command("debug"); err == nil {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("ipmi_sim did not start within 15 s:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// Command runs emulation commands (ipmi_sim_cmd(5): "sensor_set_value
// 0x20 0 1 0x95 0", "sensor_set_bit 0x20 0 2 1 1 0") on the simulator's
// console, failing the test if the console cannot be reached.
func (s *IPMISim) Command(t testing.TB, cmds ...string) {
	t.Helper()
	if err := s.command(cmds...); err != nil {
		t.Fatalf("ipmi_sim console: %v", err)
	}
}

func (s *IPMISim) command(cmds ...string) error {
	c, err := net.DialTimeout("tcp", s.console, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	r := bufio.NewReader(c)
	// The console greets with telnet negotiation and a "> " prompt; each
	// command is echoed and followed by the prompt again.
	if err := readPrompt(r); err != nil {
		return err
	}
	for _, cmd := range cmds {
		if _, err := c.Write([]byte(cmd + "\n")); err != nil {
			return err
		}
		if err := readPrompt(r); err != nil {
			return fmt.Errorf("after %q: %w", cmd, err)
		}
	}
	return nil
}

func readPrompt(r *bufio.Reader) error {
	var seen []byte
	for !strings.HasSuffix(string(seen), "> ") {
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		seen = append(seen, b)
	}
	return nil
}

// freeTCPPort returns a TCP port of 127.0.0.1 that was free a moment
// ago.
func freeTCPPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
