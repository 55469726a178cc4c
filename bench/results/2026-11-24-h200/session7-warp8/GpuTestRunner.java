import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The console launcher's "execute --select-class ... [--include-tag gpu] --details=summary", with
 * the platform launcher alone (no console-standalone jar offline). Args: [--tag gpu] classes...
 */
public final class GpuTestRunner {
  public static void main(String[] args) {
    List<String> classes = new ArrayList<>();
    String tag = null;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--tag")) tag = args[++i];
      else classes.add(args[i]);
    }
    LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
    for (String c : classes) request.selectors(selectClass(c));
    if (tag != null) request.filters(TagFilter.includeTags(tag));
    LauncherDiscoveryRequest built = request.build();
    Launcher launcher = LauncherFactory.create();
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    launcher.execute(built, listener);
    TestExecutionSummary summary = listener.getSummary();
    PrintWriter out = new PrintWriter(System.out);
    summary.printFailuresTo(out, 25);
    summary.printTo(out);
    out.flush();
    System.exit(summary.getTotalFailureCount() == 0 ? 0 : 1);
  }
}
