// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Runs imports off the UI thread: one worker thread with its own store
// connection (SQLite lets it write in turn with the others: README, Layout),
// progress coalesced for the UI.

#include "engine/store/bar_importer.h"

#include <QObject>
#include <QString>
#include <QStringList>

#include <atomic>
#include <memory>
#include <thread>

namespace foxhunt {

/// The outcome of one file of an import batch, ready for display.
struct ImportOutcome {
    QString path;
    bool ok = false;
    QString error;               ///< `file:line: reason` when rejected
    bool storedConflict = false; ///< rejected because its bars contradict stored ones
    ImportResult result;         ///< valid when ok
};

/// Imports files into the store on a worker thread.
class ImportController : public QObject {
    Q_OBJECT
public:
    explicit ImportController(QString databasePath, QObject* parent = nullptr);
    ~ImportController() override;

    /// Starts importing the files in order; ignored (returns false) while busy.
    bool start(const QStringList& files, const ImportOptions& options = {});
    /// Asks the worker to abandon the current file (its transaction rolls back).
    void cancel();
    bool busy() const { return m_busy.load(); }
    /// Outcomes of the last finished batch.
    const std::vector<ImportOutcome>& outcomes() const { return m_outcomes; }

Q_SIGNALS:
    /// Progress of the whole batch in percent, never decreasing within a batch, and a line of
    /// text; at most a few per second.
    void progress(int percent, const QString& text);
    /// The batch is done; outcomes() holds one entry per file.
    void finished();

private:
    void run(QStringList files, ImportOptions options);

    QString m_databasePath;
    std::atomic<bool> m_busy{false};
    std::atomic<bool> m_cancel{false};
    std::vector<ImportOutcome> m_outcomes;
    std::jthread m_worker;
};

} // namespace foxhunt
