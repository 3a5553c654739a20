// SPDX-License-Identifier: GPL-3.0-or-later
#include "ui/series_label.h"

#include "engine/data/market_time.h"

#include <QCoreApplication>
#include <QStringList>

namespace foxhunt {

QString intervalText(std::int64_t ns)
{
    const std::int64_t s = ns / kNsPerSecond;
    if (s <= 0) return QStringLiteral("?");
    if (s % 86400 == 0) return QStringLiteral("%1 d").arg(s / 86400);
    if (s % 3600 == 0) return QStringLiteral("%1 h").arg(s / 3600);
    if (s % 60 == 0) return QStringLiteral("%1 min").arg(s / 60);
    return QStringLiteral("%1 s").arg(s);
}

std::pair<QDate, QDate> seriesTradingDays(const SeriesInfo& series)
{
    if (series.barCount == 0) return {};
    EsCalendar calendar;
    const QDate epoch(1970, 1, 1);
    return {epoch.addDays(calendar.tradingDay(series.firstTs)), epoch.addDays(calendar.tradingDay(series.lastTs))};
}

QString seriesLabel(const SeriesInfo& series)
{
    QStringList parts{QString::fromStdString(series.symbol)};
    if (series.intervalNs > 0) parts << intervalText(series.intervalNs);
    if (const auto [first, last] = seriesTradingDays(series); first.isValid())
        parts << QStringLiteral("%1 – %2").arg(first.toString(Qt::ISODate), last.toString(Qt::ISODate));
    QString text = parts.join(QStringLiteral(" · "));
    if (series.synthetic()) text += QCoreApplication::translate("foxhunt::SeriesLabel", " (synthetic)");
    return text;
}

} // namespace foxhunt
