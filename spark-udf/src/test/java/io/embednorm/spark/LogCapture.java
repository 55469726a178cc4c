package io.embednorm.spark;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

/** Collects the INFO and higher messages of one logger while open, for asserting log output. */
final class LogCapture implements AutoCloseable {
  private final String loggerName;
  private final List<String> messages = new CopyOnWriteArrayList<>();
  private final LoggerContext context;

  private LogCapture(String loggerName) {
    this.loggerName = loggerName;
    this.context = (LoggerContext) LogManager.getContext(false);
    AbstractAppender appender =
        new AbstractAppender("capture-" + loggerName, null, null, true, Property.EMPTY_ARRAY) {
          @Override
          public void append(LogEvent event) {
            messages.add(event.getMessage().getFormattedMessage());
          }
        };
    appender.start();
    LoggerConfig logger = new LoggerConfig(loggerName, Level.INFO, false);
    logger.addAppender(appender, Level.INFO, null);
    Configuration configuration = context.getConfiguration();
    configuration.addLogger(loggerName, logger);
    context.updateLoggers();
  }

  /** Starts collecting the messages of the logger named after {@code type}. */
  static LogCapture of(Class<?> type) {
    return new LogCapture(type.getName());
  }

  List<String> messages() {
    return List.copyOf(messages);
  }

  @Override
  public void close() {
    context.getConfiguration().removeLogger(loggerName);
    context.updateLoggers();
  }
}
