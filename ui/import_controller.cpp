// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/import_controller.h"

#include "engine/data/import_error.h"

#include <QMetaObject>

#include <algorithm>
#include <chrono>

namespace foxhunt {

namespace {

/// Thrown from the progress callback to abandon an import; the store rolls back.
struct ImportCancelled : std::runtime_error {
    ImportCancelled() : std::runtime_error("import cancelled") { }
};

} // namespace

ImportController::ImportController(QString databasePath, QObject* parent)
    : QObject(parent), m_databasePath(std::move(databasePath))
{
}

ImportController::~ImportController()
{
    cancel();
    if (m_worker.joinable()) m_worker.join();
}

bool ImportController::start(const QStringList& files, const ImportOptions& options)
{
    if (m_busy.exchange(true)) return false;
    if (m_worker.joinable()) m_worker.join();
    m_cancel = false;
    m_worker = std::jthread([this, files, options] { run(files, options); });
    return true;
}

void ImportController::cancel()
{
    m_cancel = true;
}

void ImportController::run(QStringList files, ImportOptions options)
{
    std::vector<ImportOutcome> outcomes;
    auto lastEmit = std::chrono::steady_clock::now() - std::chrono::seconds(1);
    auto report = [&](int percent, const QString& text, bool force) {
        const auto now = std::chrono::steady_clock::now();
        if (!force && now - lastEmit < std::chrono::milliseconds(100)) return;
        lastEmit = now;
        QMetaObject::invokeMethod(
            this, [this, percent, text] { Q_EMIT progress(percent, text); }, Qt::QueuedConnection);
    };

    std::unique_ptr<BarStore> store;
    try {
        store = std::make_unique<BarStore>(m_databasePath.toStdString());
    } catch (const std::exception& e) {
        for (const QString& f : files) outcomes.push_back({f, false, QString::fromStdString(e.what()), false, {}});
    }

    const int n = static_cast<int>(files.size());
    for (int i = 0; store && i < n; ++i) {
        const QString file = files.at(i);
        ImportOutcome outcome;
        outcome.path = file;
        report(100 * i / n, tr("Importing %1").arg(file), true);
        // Each stage counts from 0 to 1 again: overallImportFraction makes one rising figure of them.
        double overall = 0.0;
        std::string lastStage;
        try {
            outcome.result = BarImporter(*store).importFile(
                file.toStdString(), options, [&](double fraction, std::string_view stage) {
                    if (m_cancel) throw ImportCancelled();
                    overall = std::max(overall, overallImportFraction(fraction, stage));
                    // A new stage is shown at once (storing may wait for another writer); within a
                    // stage at most every 100 ms.
                    const bool newStage = stage != lastStage;
                    if (newStage) lastStage = stage;
                    report(static_cast<int>(100.0 * (i + overall) / n),
                           tr("%1: %2").arg(file, QString::fromUtf8(stage.data(), static_cast<int>(stage.size()))),
                           newStage);
                });
            outcome.ok = true;
        } catch (const StoredBarConflict& e) {
            outcome.error = QString::fromStdString(e.what());
            outcome.storedConflict = true;
        } catch (const ImportCancelled&) {
            outcome.error = tr("%1: import cancelled, nothing stored").arg(file);
        } catch (const std::exception& e) {
            outcome.error = QString::fromStdString(e.what());
        }
        outcomes.push_back(std::move(outcome));
        if (m_cancel) break;
    }
    report(100, tr("Import finished"), true);
    QMetaObject::invokeMethod(
        this,
        [this, outcomes = std::move(outcomes)]() mutable {
            m_outcomes = std::move(outcomes);
            m_busy = false;
            Q_EMIT finished();
        },
        Qt::QueuedConnection);
}

} // namespace foxhunt
