// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/import_report.h"

#include "engine/data/market_time.h"

#include <QStringList>

namespace foxhunt {

QString formatImportReport(const std::vector<ImportOutcome>& outcomes)
{
    QStringList lines;
    for (const ImportOutcome& o : outcomes) {
        if (!o.ok) {
            lines << QObject::tr("REJECTED %1").arg(o.error) << QObject::tr("  nothing from this file was stored");
            if (o.storedConflict)
                lines << QObject::tr("  to replace the stored bars with this file's: foxhunt-cli import --replace %1")
                             .arg(o.path);
            continue;
        }
        const ImportResult& r = o.result;
        if (r.alreadyImported) {
            lines << QObject::tr("%1: already imported, nothing written").arg(o.path);
            continue;
        }
        const ValidationReport& v = r.validation;
        lines << QObject::tr("%1: %2, %3 bars into %4, %5 duplicates dropped")
                     .arg(o.path, QString::fromStdString(toString(r.format)))
                     .arg(r.imported)
                     .arg(QString::fromStdString(r.instrument))
                     .arg(r.duplicatesDropped);
        if (r.imported + r.alreadyStored > 0)
            lines << QObject::tr("  %1 .. %2")
                         .arg(QString::fromStdString(formatUtc(r.firstTs)),
                              QString::fromStdString(formatUtc(r.lastTs)));
        lines << QObject::tr("  gaps: %1 daily breaks, %2 weekends, %3 holidays, %4 other")
                     .arg(v.dailyBreaks)
                     .arg(v.weekends)
                     .arg(v.holidays)
                     .arg(v.otherGaps);
        for (const Roll& roll : r.rolls)
            lines << QObject::tr("  roll %1: %2 -> %3 (gap %4)")
                         .arg(QString::fromStdString(formatDate(roll.tradingDay)),
                              QString::fromStdString(roll.fromSymbol), QString::fromStdString(roll.toSymbol))
                         .arg(toPoints(roll.priceGap));
        for (const std::string& w : r.warnings) lines << QObject::tr("  warning: %1").arg(QString::fromStdString(w));
    }
    return lines.join(QLatin1Char('\n'));
}

} // namespace foxhunt
