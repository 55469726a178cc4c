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

/**
 * Collects the messages of one logger (and the loggers below it) at a level and higher while open,
 * INFO unless given, for asserting log output.
 */
final class LogCapture implements AutoCloseable {
  private final String loggerName;
  private final List<String> messages = new CopyOnWriteArrayList<>();
  private final LoggerContext context;
  private LoggerConfig existing;
  private String appenderName;
  private Level existingLevel;

  private LogCapture(String loggerName) {
    this(loggerName, Level.INFO);
  }

  private LogCapture(String loggerName, Level level) {
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
    Configuration configuration = context.getConfiguration();
    LoggerConfig configured = configuration.getLoggers().get(loggerName);
    if (configured != null) {
      // The configuration names this logger (conf/log4j2.properties names io.embednorm): a second
      // config of the same name would not be added, so listen on the one there is.
      this.existing = configured;
      this.appenderName = appender.getName();
      this.existingLevel = configured.getLevel();
      configured.setLevel(level);
      configured.addAppender(appender, level, null);
    } else {
      LoggerConfig logger = new LoggerConfig(loggerName, level, false);
      logger.addAppender(appender, level, null);
      configuration.addLogger(loggerName, logger);
    }
    context.updateLoggers();
  }

  /** Starts collecting the messages of the logger named after {@code type}. */
  static LogCapture of(Class<?> type) {
    return new LogCapture(type.getName());
  }

  /** Starts collecting the messages at {@code level} and higher of {@code loggerName} and below. */
  static LogCapture of(String loggerName, Level level) {
    return new LogCapture(loggerName, level);
  }

  List<String> messages() {
    return List.copyOf(messages);
  }

  @Override
  public void close() {
    if (existing != null) {
      existing.removeAppender(appenderName);
      existing.setLevel(existingLevel);
    } else {
      context.getConfiguration().removeLogger(loggerName);
    }
    context.updateLoggers();
  }
}
