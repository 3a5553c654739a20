// SPDX-License-Identifier: GPL-3.0-or-later
// Tests engine/telemetry/axis_scale.h with hand cases: display units of bytes and
// durations, round ticks, and values formatted with their unit.

#include "engine/telemetry/axis_scale.h"
#include "tests/support/test_bundle.h"

#include <QTest>

namespace tst_axis_scale {

using namespace foxhunt;
using metrics::Unit;

class TestAxisScale : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void bytesStepBy1024_data();
    void bytesStepBy1024();
    void durations();
    void otherUnitsKeepTheirSymbol();
    void ticksAreRound_data();
    void ticksAreRound();
    void ticksOfAFlatRange();
    void formattedValues();
};

void TestAxisScale::bytesStepBy1024_data()
{
    QTest::addColumn<double>("maxAbs");
    QTest::addColumn<QString>("symbol");
    QTest::addColumn<double>("divisor");
    QTest::newRow("0") << 0.0 << "B" << 1.0;
    QTest::newRow("1023 B") << 1023.0 << "B" << 1.0;
    QTest::newRow("1 KiB") << 1024.0 << "KiB" << 1024.0;
    QTest::newRow("40 KiB") << 40.0 * 1024 << "KiB" << 1024.0;
    QTest::newRow("3 MiB") << 3.0 * 1024 * 1024 << "MiB" << 1024.0 * 1024;
    QTest::newRow("negative 3 MiB") << -3.0 * 1024 * 1024 << "MiB" << 1024.0 * 1024;
    QTest::newRow("2.5 GiB") << 2.5 * 1024 * 1024 * 1024 << "GiB" << 1024.0 * 1024 * 1024;
    QTest::newRow("5000 TiB") << 5000.0 * 1024 * 1024 * 1024 * 1024 << "TiB" << 1024.0 * 1024 * 1024 * 1024;
    QTest::newRow("nan") << std::nan("") << "B" << 1.0;
}

void TestAxisScale::bytesStepBy1024()
{
    QFETCH(double, maxAbs);
    QFETCH(QString, symbol);
    QFETCH(double, divisor);
    const axis::DisplayUnit u = axis::displayUnit(Unit::Bytes, maxAbs);
    QCOMPARE(QString::fromStdString(u.symbol), symbol);
    QCOMPARE(u.divisor, divisor);
}

void TestAxisScale::durations()
{
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::Milliseconds, 0.25).symbol), QStringLiteral("µs"));
    QCOMPARE(axis::displayUnit(Unit::Milliseconds, 0.25).divisor, 1e-3);
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::Milliseconds, 0.0).symbol), QStringLiteral("ms"));
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::Milliseconds, 1.0).symbol), QStringLiteral("ms"));
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::Milliseconds, 999.0).symbol), QStringLiteral("ms"));
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::Milliseconds, 1500.0).symbol), QStringLiteral("s"));
    QCOMPARE(axis::displayUnit(Unit::Milliseconds, 1500.0).divisor, 1000.0);
}

void TestAxisScale::otherUnitsKeepTheirSymbol()
{
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::Ticks, 1e9).symbol), QStringLiteral("ticks"));
    QCOMPARE(axis::displayUnit(Unit::Ticks, 1e9).divisor, 1.0);
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::None, 5.0).symbol), QString());
    QCOMPARE(QString::fromStdString(axis::displayUnit(Unit::SamplesPerSecond, 5.0).symbol),
             QStringLiteral("samples/s"));
}

void TestAxisScale::ticksAreRound_data()
{
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<double>("min");
    QTest::addColumn<double>("max");
    QTest::addColumn<double>("step");
    QTest::addColumn<int>("decimals");
    QTest::newRow("0..3.2") << 0.0 << 3.2 << 0.0 << 4.0 << 1.0 << 0;
    QTest::newRow("0.039..3.15") << 0.039 << 3.15 << 0.0 << 4.0 << 1.0 << 0;
    QTest::newRow("0.12..0.87") << 0.12 << 0.87 << 0.0 << 1.0 << 0.2 << 1;
    QTest::newRow("-7..13") << -7.0 << 13.0 << -10.0 << 15.0 << 5.0 << 0;
    QTest::newRow("1003..1047") << 1003.0 << 1047.0 << 1000.0 << 1050.0 << 10.0 << 0;
    QTest::newRow("0.00012..0.00031") << 0.00012 << 0.00031 << 0.0001 << 0.00035 << 0.00005 << 5;
    QTest::newRow("0..1e6") << 0.0 << 1e6 << 0.0 << 1e6 << 200000.0 << 0;
}

void TestAxisScale::ticksAreRound()
{
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(double, min);
    QFETCH(double, max);
    QFETCH(double, step);
    QFETCH(int, decimals);
    const axis::Ticks t = axis::niceTicks(lo, hi, 6);
    QCOMPARE(t.step, step);
    QCOMPARE(t.min, min);
    QCOMPARE(t.max, max);
    QCOMPARE(t.decimals, decimals);
    QVERIFY(t.min <= lo && t.max >= hi);
    QVERIFY(t.count >= 2 && t.count <= 6);
    QCOMPARE(t.count, static_cast<int>(std::llround((t.max - t.min) / t.step)) + 1);
}

void TestAxisScale::ticksOfAFlatRange()
{
    const axis::Ticks one = axis::niceTicks(1.0, 1.0, 6);
    QVERIFY(one.min < 1.0 && one.max > 1.0);
    QVERIFY(one.count <= 6);
    const axis::Ticks zero = axis::niceTicks(0.0, 0.0, 6);
    QVERIFY(zero.min < 0.0 && zero.max > 0.0);
}

void TestAxisScale::formattedValues()
{
    auto f = [](double v, Unit u) { return QString::fromStdString(axis::formatValue(v, u)); };
    QCOMPARE(f(40.0 * 1024, Unit::Bytes), QStringLiteral("40.0 KiB"));
    QCOMPARE(f(3.0 * 1024 * 1024, Unit::Bytes), QStringLiteral("3.00 MiB"));
    QCOMPARE(f(512.0, Unit::Bytes), QStringLiteral("512 B"));
    QCOMPARE(f(0.25, Unit::Milliseconds), QStringLiteral("250 µs"));
    QCOMPARE(f(12.5, Unit::Milliseconds), QStringLiteral("12.5 ms"));
    QCOMPARE(f(2500.0, Unit::Milliseconds), QStringLiteral("2.50 s"));
    QCOMPARE(f(1.0, Unit::None), QStringLiteral("1"));
    QCOMPARE(f(65536.0, Unit::None), QStringLiteral("65536"));
    QCOMPARE(f(0.53, Unit::None), QStringLiteral("0.530"));
    QCOMPARE(f(0.0123, Unit::None), QStringLiteral("0.0123"));
    QCOMPARE(f(-3.5, Unit::Ticks), QStringLiteral("-3.50 ticks"));
    QCOMPARE(f(std::nan(""), Unit::None), QStringLiteral("n/a"));
}

} // namespace tst_axis_scale

FOXHUNT_TEST_APPLESS_MAIN(tst_axis_scale::TestAxisScale)
#include "tst_axis_scale.moc"
