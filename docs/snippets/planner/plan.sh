.venv/bin/cdk-ts plan --writes-per-second 1000 --average-writes-per-second 400 --reads-per-second 600 \
    --average-reads-per-second 200 --item-size 1000 --period daily --retain-periods 14 --plot cost.png
