"""The training example runs end to end (short runs of the MLP and the CNN) and learns: its
exit status reports the accuracy threshold."""

import pathlib
import runpy

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "train_digits.py"


def run(args, capsys):
    main = runpy.run_path(str(EXAMPLE))["main"]
    status = main(args)
    return status, capsys.readouterr().out


def test_mlp_learns_the_digits(capsys):
    status, out = run(["--model", "mlp", "--epochs", "4", "--min-accuracy", "0.93"], capsys)
    assert status == 0, out
    assert "ms/epoch" in out and "epoch  4/4 [########################]" in out
    accuracy = float(out.strip().splitlines()[-1].split()[-1])
    assert accuracy >= 0.93, out


def test_lenet_learns_the_digits(capsys):
    status, out = run(["--model", "lenet", "--epochs", "5", "--min-accuracy", "0.9"], capsys)
    assert status == 0, out
    assert "lenet: 6034 parameters" in out
