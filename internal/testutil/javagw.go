package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// javaGatewayJar is where Debian's zabbix-java-gateway installs the
// gateway.
const javaGatewayJar = "/usr/sbin/zabbix-java-gateway.jar"

// JavaGatewayOptions configures StartJavaGateway.
type JavaGatewayOptions struct {
	// Pollers is the gateway's START_POLLERS (threads serving
	// requests). Default 5, Debian's.
	Pollers int
	// Timeout is the gateway's TIMEOUT in seconds (connecting to a JVM
	// and reading from it). Default 3, Debian's.
	Timeout int
}

// JavaGateway is a running Zabbix Java gateway (Debian
// zabbix-java-gateway) started by StartJavaGateway.
type JavaGateway struct {
	// Addr is its "127.0.0.1:port".
	Addr string
	out  *lockedBuffer
}

// Log returns what the gateway logged so far (logback at info).
func (g *JavaGateway) Log() string { return g.out.String() }

// StartJavaGateway starts the real Zabbix Java gateway as Debian's start
// script runs it (java -jar /usr/sbin/zabbix-java-gateway.jar with the
// zabbix.* properties), unprivileged, listening on a free port of
// 127.0.0.1, logging to the test's output buffer. It is stopped when the
// test ends. A missing gateway or java skips the test (fails under CI).
func StartJavaGateway(t testing.TB, o JavaGatewayOptions) *JavaGateway {
	t.Helper()
	java := Need(t, "java", "default-jre-headless")
	if _, err := os.Stat(javaGatewayJar); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found under CI: .ci/run must install the Debian package zabbix-java-gateway", javaGatewayJar)
		}
		t.Skipf("%s not installed (apt-get install zabbix-java-gateway)", javaGatewayJar)
	}
	if o.Pollers <= 0 {
		o.Pollers = 5
	}
	if o.Timeout <= 0 {
		o.Timeout = 3
	}
	dir := t.TempDir()
	logback := filepath.Join(dir, "logback.xml")
	// Logback reads its configuration from this file only; the
	// package's writes to /var/log, which needs the zabbix user.
	writeFile(t, logback, `<configuration>
  <appender name="OUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg%n</pattern></encoder>
  </appender>
  <root level="info"><appender-ref ref="OUT"/></root>
</configuration>
`)
	port := freePort(t)
	g := &JavaGateway{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: &lockedBuffer{}}
	cmd := exec.Command(java, "-Xmx64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzabbix.listenIP=127.0.0.1", "-Dzabbix.listenPort="+strconv.Itoa(port),
		"-Dzabbix.startPollers="+strconv.Itoa(o.Pollers), "-Dzabbix.timeout="+strconv.Itoa(o.Timeout),
		fmt.Sprintf("-Dsun.rmi.transport.tcp.responseTimeout=%d000", o.Timeout),
		"-Dlogback.configurationFile="+logback, "-jar", javaGatewayJar)
	startJava(t, cmd, g.out, g.Addr, "zabbix-java-gateway")
	return g
}

// JMXAppOptions configures StartJMXApp.
type JMXAppOptions struct {
	// Beans is how many test MBeans peregrine:type=Test,name=t<i> the
	// JVM registers (attributes Count (int, i), Name (string, "t<i>"),
	// Ratio (double, i/4) and Total (long, ticks since start)); default
	// 1.
	Beans int
	// Username and Password, if set, are the one JMX user (read-only)
	// the JVM accepts: remote JMX with authentication, as production
	// JVMs run it.
	Username, Password string
}

// JMXApp is a JVM with remote JMX on loopback started by StartJMXApp.
type JMXApp struct {
	// Port is its JMX port (RMI registry and server on one port) on
	// 127.0.0.1, and Addr "127.0.0.1:Port".
	Port int
	Addr string
	out  *lockedBuffer
}

// jmxAppSource is the JVM's main class: test MBeans, then sleep.
const jmxAppSource = `import java.lang.management.ManagementFactory;
import javax.management.MBeanServer;
import javax.management.ObjectName;

public class PeregrineJMXApp {
    public interface TestMBean { int getCount(); String getName(); double getRatio(); long getTotal(); }

    public static class Test implements TestMBean {
        private final int i;
        private final long start = System.nanoTime();
        Test(int i) { this.i = i; }
        public int getCount() { return i; }
        public String getName() { return "t" + i; }
        public double getRatio() { return i / 4.0; }
        public long getTotal() { return (System.nanoTime() - start) / 1000000; }
    }

    public static void main(String[] args) throws Exception {
        MBeanServer s = ManagementFactory.getPlatformMBeanServer();
        int n = Integer.parseInt(args[0]);
        for (int i = 0; i < n; i++) {
            s.registerMBean(new Test(i), new ObjectName("peregrine:type=Test,name=t" + i));
        }
        System.out.println("peregrine-jmx-app ready");
        Thread.sleep(Long.MAX_VALUE);
    }
}
`

// StartJMXApp compiles a small Java program (javac) that registers
// test MBeans and sleeps, and runs it with remote JMX on a free port of
// 127.0.0.1 (no SSL; authentication only with o.Username). It is
// stopped when the test ends. A missing java or javac skips the test
// (fails under CI).
func StartJMXApp(t testing.TB, o JMXAppOptions) *JMXApp {
	t.Helper()
	java := Need(t, "java", "default-jre-headless")
	javac := Need(t, "javac", "default-jdk-headless")
	if o.Beans <= 0 {
		o.Beans = 1
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "PeregrineJMXApp.java"), jmxAppSource)
	if out, err := exec.Command(javac, "-d", dir, filepath.Join(dir, "PeregrineJMXApp.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	port := freePort(t)
	a := &JMXApp{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), out: &lockedBuffer{}}
	p := strconv.Itoa(port)
	args := []string{"-Xmx32m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dcom.sun.management.jmxremote.port=" + p, "-Dcom.sun.management.jmxremote.rmi.port=" + p,
		"-Dcom.sun.management.jmxremote.host=127.0.0.1", "-Djava.rmi.server.hostname=127.0.0.1",
		"-Dcom.sun.management.jmxremote.ssl=false", "-Dcom.sun.management.jmxremote.local.only=true"}
	if o.Username != "" {
		pw, acc := filepath.Join(dir, "jmxremote.password"), filepath.Join(dir, "jmxremote.access")
		// The JVM refuses a password file others may read.
		writeFile(t, pw, o.Username+" "+o.Password+"\n")
		writeFile(t, acc, o.Username+" readonly\n")
		args = append(args, "-Dcom.sun.management.jmxremote.authenticate=true",
			"-Dcom.sun.management.jmxremote.password.file="+pw, "-Dcom.sun.management.jmxremote.access.file="+acc)
	} else {
		args = append(args, "-Dcom.sun.management.jmxremote.authenticate=false")
	}
	args = append(args, "-cp", dir, "PeregrineJMXApp", strconv.Itoa(o.Beans))
	startJava(t, exec.Command(java, args...), a.out, a.Addr, "the JMX test application")
	return a
}

// startJava starts a JVM in a process group of its own, stops it when
// the test ends, and waits until it listens on addr.
func startJava(t testing.TB, cmd *exec.Cmd, out *lockedBuffer, addr, what string) {
	t.Helper()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", what, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	// A JVM starts in a second or two; a loaded machine takes longer.
	end := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			t.Fatalf("%s exited at start:\n%s", what, out.String())
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("%s not listening on %s after 60 s:\n%s", what, addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
